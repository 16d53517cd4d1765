package resume

import (
	"os"
	"reflect"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestFindChecked: FindChecked (the check run while the glance reads)
// gives what Find then Check give, for a session by id, by path and by
// title, healthy and with a torn last line.
func TestFindChecked(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := damage.CopyStore(t, damage.V88)
	damage.Age(t, root)
	main := damage.MainFile(root)
	for _, torn := range []bool{false, true} {
		if torn {
			fh, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fh.WriteString(`{"type":"user","torn`)
			fh.Close()
		}
		for _, by := range [][2]string{{"3ba86ea1", ""}, {main, ""}, {"", "first session"}} {
			want, err := Find(root, by[0], by[1])
			if err != nil {
				t.Fatal(err)
			}
			wantFound, err := Check(root, want)
			if err != nil {
				t.Fatal(err)
			}
			got, found, err := FindChecked(root, by[0], by[1])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(found, wantFound) {
				t.Errorf("%v (torn %v): FindChecked %+v %v, Find and Check %+v %v", by, torn, got, found, want, wantFound)
			}
			if torn != (len(found) > 0) {
				t.Errorf("%v (torn %v): the check found %v", by, torn, found)
			}
		}
	}
	if _, _, err := FindChecked(root, "", "no such words"); err == nil {
		t.Error("a title no session holds is found")
	}
}
