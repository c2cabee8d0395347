package claim_test

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ctrlkit/ctrlkit/claim"
)

func TestAdopters(t *testing.T) {
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	notFoo, err := labels.Parse("!foo")
	if err != nil {
		t.Fatal(err)
	}
	selectors := map[string]labels.Selector{"web": web, "db": labels.SelectorFromSet(labels.Set{"app": "db"}),
		"everything": labels.Everything(), "nil": nil, "no-foo": notFoo, "broken": web}
	owners := []string{"web", "db", "everything", "nil", "no-foo", "broken"}
	selector := func(name string) (labels.Selector, error) {
		if name == "broken" {
			return web, errors.New("unparsable")
		}
		return selectors[name], nil
	}
	now := metav1.Now()
	for name, tc := range map[string]struct {
		obj  metav1.ObjectMeta
		want []string
	}{
		"orphan":            {metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, []string{"web", "no-foo"}},
		"no labels":         {metav1.ObjectMeta{}, nil},
		"being deleted":     {metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, DeletionTimestamp: &now}, nil},
		"controlled":        {metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, OwnerReferences: []metav1.OwnerReference{{Controller: new(true), Name: "x"}}}, nil},
		"owned, no control": {metav1.ObjectMeta{Labels: map[string]string{"app": "db"}, OwnerReferences: []metav1.OwnerReference{{Name: "x"}}}, []string{"db", "no-foo"}},
	} {
		if got := claim.Adopters(&tc.obj, owners, selector); !slices.Equal(got, tc.want) {
			t.Errorf("%s: adopters %v, want %v", name, got, tc.want)
		}
	}
}
