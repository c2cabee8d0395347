package validation_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/ctrlkit/ctrlkit/validation"
)

// A webhook for a ReplicaSet-like resource runs the local checks, then asks
// the API server about the pod spec.
func Example() {
	fldPath := field.NewPath("spec", "template")
	selector := labels.SelectorFromSet(labels.Set{"app": "web"})
	template := &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyOnFailure,
			Containers:    []v1.Container{{Name: "web"}}, // no image
		},
	}
	errs := validation.ValidatePodTemplateSpecForReplicaSet(template, selector, 3, fldPath)

	// A fake clientset stands in for the API server here, answering as
	// kube-apiserver answers a pod template without an image.
	client := fake.NewClientset()
	client.PrependReactor("create", "podtemplates", func(clienttesting.Action) (bool, runtime.Object, error) {
		image := field.NewPath("template", "spec", "containers").Index(0).Child("image")
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "PodTemplate"}, "ctrlkit-validate-x",
			field.ErrorList{field.Required(image, "")})
	})
	serverErrs, err := validation.ValidatePodTemplateWithServer(context.Background(), client, "default", template, fldPath)
	if err != nil {
		fmt.Println("could not ask the server:", err)
		return
	}
	for _, e := range append(errs, serverErrs...) {
		fmt.Println(e)
	}
	// Output:
	// spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"
	// spec.template.spec.containers[0].image: Required value
}

// maxSurge and maxUnavailable take an integer or a percentage of at most
// 100%.
func ExampleValidatePositiveIntOrPercent() {
	p := field.NewPath("spec", "strategy", "rollingUpdate", "maxUnavailable")
	for _, v := range []intstr.IntOrString{intstr.FromInt32(2), intstr.FromString("25%"), intstr.FromString("150%"), intstr.FromString("half")} {
		errs := append(validation.ValidatePositiveIntOrPercent(v, p), validation.IsNotMoreThan100Percent(v, p)...)
		fmt.Printf("%s: %d error(s)\n", v.String(), len(errs))
	}
	// Output:
	// 2: 0 error(s)
	// 25%: 0 error(s)
	// 150%: 1 error(s)
	// half: 1 error(s)
}
