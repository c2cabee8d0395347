package parity

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsv1defaults "k8s.io/kubernetes/pkg/apis/apps/v1"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"

	"github.com/ctrlkit/ctrlkit/childset"
)

// boundsCase is one Deployment strategy: maxSurge and maxUnavailable (nil
// for the default) and the wanted replicas.
type boundsCase struct {
	surge, unavailable *intstr.IntOrString
	replicas           int32
}

// upstreamBounds is what a Deployment with c's strategy meets upstream:
// the API server's defaulting and validation, then the controller's
// MaxSurge and MaxUnavailable (whose ResolveFenceposts error the
// controller drops, so it is checked on its own).
func upstreamBounds(c boundsCase) (childset.RolloutBounds, error) {
	replicas := c.replicas
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
		Replicas: &replicas,
		Strategy: appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: clonePtr(c.surge), MaxUnavailable: clonePtr(c.unavailable)},
		},
	}}
	appsv1defaults.SetDefaults_Deployment(d)
	ru := d.Spec.Strategy.RollingUpdate
	internal := &apps.RollingUpdateDeployment{MaxSurge: *ru.MaxSurge, MaxUnavailable: *ru.MaxUnavailable}
	if errs := appsvalidation.ValidateRollingUpdateDeployment(internal, field.NewPath("spec", "strategy", "rollingUpdate")); len(errs) > 0 {
		return childset.RolloutBounds{}, errs.ToAggregate()
	}
	if _, _, err := deploymentutil.ResolveFenceposts(ru.MaxSurge, ru.MaxUnavailable, replicas); err != nil {
		return childset.RolloutBounds{}, err
	}
	return childset.RolloutBounds{MaxSurge: deploymentutil.MaxSurge(*d), MaxUnavailable: deploymentutil.MaxUnavailable(*d)}, nil
}

func clonePtr(v *intstr.IntOrString) *intstr.IntOrString {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}

func checkBounds(c boundsCase) string {
	want, wantErr := upstreamBounds(c)
	got, gotErr := childset.RollingUpdate{MaxSurge: clonePtr(c.surge), MaxUnavailable: clonePtr(c.unavailable)}.Bounds(c.replicas)
	if (wantErr == nil) != (gotErr == nil) || wantErr == nil && got != want {
		return fmt.Sprintf("Bounds = %+v, %v; upstream %+v, %v", got, gotErr, want, wantErr)
	}
	return ""
}

// surgeBeyondInt32 reports a valid percentage maxSurge that resolves beyond
// the int32 range: upstream wraps it around, ctrlkit refuses it
// (DIFFERENCES.md), so the generator never makes one.
func surgeBeyondInt32(c boundsCase) bool {
	s := c.surge
	if s == nil || s.Type != intstr.String {
		return false
	}
	digits, ok := strings.CutSuffix(s.StrVal, "%")
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	if _, err := strconv.Atoi(digits); err != nil {
		return false // beyond int64: both sides refuse it
	}
	p, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return false
	}
	// ceil(p*replicas/100) > MaxInt32  <=>  p*replicas > 100*MaxInt32
	product := p.Mul(p, big.NewInt(int64(max(c.replicas, 0))))
	return product.Cmp(big.NewInt(100*math.MaxInt32)) > 0
}

var (
	goodPercents = []string{"0%", "1%", "10%", "25%", "33%", "50%", "66%", "99%", "100%", "101%", "150%", "200%", "1000%", "007%", "0100%", "00%"}
	badPercents  = []string{"", "%", "5", "0", "-5%", "+5%", " 5%", "5 %", "5.5%", "5%%", "5%\n", "abc", "٣%", "1e2%", "0x10%", "99999999999999999999%"}
)

func genFencepost(r *rand.Rand) *intstr.IntOrString {
	var v intstr.IntOrString
	switch r.IntN(12) {
	case 0, 1:
		return nil
	case 2, 3:
		v = intstr.FromInt32(oneOf[int32](r, 0, 0, 1, 1, 2, 3, 5, 10, math.MaxInt32))
	case 4:
		v = intstr.FromInt32(int32(r.IntN(40)))
	case 5:
		v = intstr.FromInt32(oneOf[int32](r, -1, -5, math.MinInt32, int32(-r.IntN(1000))))
	case 6, 7, 8:
		v = intstr.FromString(oneOf(r, goodPercents...))
	case 9:
		v = intstr.FromString(strconv.Itoa(r.IntN(121)) + "%")
	case 10:
		v = intstr.FromString(oneOf(r, badPercents...))
	default:
		v = intstr.FromString(oneOf(r, "99999999999%", "2147483647%", "9223372036854775807%", "9223372036854775808%"))
		if r.IntN(4) == 0 {
			v = intstr.IntOrString{Type: intstr.Type(2 + r.IntN(3)), IntVal: 1, StrVal: "1%"}
		}
	}
	return &v
}

func genBoundsCase(r *rand.Rand) boundsCase {
	c := boundsCase{surge: genFencepost(r), unavailable: genFencepost(r)}
	switch r.IntN(6) {
	case 0:
		c.replicas = oneOf[int32](r, 0, 1, 2, 3)
	case 1:
		c.replicas = int32(2*r.IntN(50) + 1) // odd
	case 2:
		c.replicas = int32(r.IntN(1001))
	case 3:
		c.replicas = oneOf[int32](r, math.MaxInt32, math.MaxInt32-1, 1<<30, 99999)
	case 4:
		c.replicas = r.Int32()
	default:
		c.replicas = int32(r.IntN(20))
	}
	if surgeBeyondInt32(c) {
		c.replicas = int32(r.IntN(2))
	}
	if surgeBeyondInt32(c) {
		c.surge = nil
	}
	return c
}

func describeBounds(c boundsCase) string {
	show := func(v *intstr.IntOrString) string {
		if v == nil {
			return "nil"
		}
		return fmt.Sprintf("{Type:%d IntVal:%d StrVal:%q}", v.Type, v.IntVal, v.StrVal)
	}
	return fmt.Sprintf("maxSurge=%s maxUnavailable=%s replicas=%d", show(c.surge), show(c.unavailable), c.replicas)
}

// shrinkBounds tries the default for each fencepost, then smaller replicas.
func shrinkBounds(c boundsCase) []boundsCase {
	var out []boundsCase
	if c.surge != nil {
		out = append(out, boundsCase{nil, c.unavailable, c.replicas})
	}
	if c.unavailable != nil {
		out = append(out, boundsCase{c.surge, nil, c.replicas})
	}
	for _, n := range []int32{0, 1, c.replicas / 2, c.replicas - 1} {
		if n >= 0 && n < c.replicas {
			out = append(out, boundsCase{c.surge, c.unavailable, n})
		}
	}
	return out
}

func TestParityRollingUpdateBounds(t *testing.T) {
	var errs, zeroes int
	target[boundsCase]{
		name:   "RollingUpdateBounds",
		gen:    genBoundsCase,
		domain: func(c boundsCase) bool { return c.replicas >= 0 && !surgeBeyondInt32(c) },
		check: func(c boundsCase) string {
			msg := checkBounds(c)
			if b, err := upstreamBounds(c); err != nil {
				errs++
			} else if b.MaxSurge == 0 && b.MaxUnavailable == 1 {
				zeroes++
			}
			return msg
		},
		shrink:   shrinkBounds,
		describe: describeBounds,
	}.run(t)
	t.Logf("upstream refused %d cases; %d resolved both fenceposts to 0 and took maxUnavailable 1", errs, zeroes)
	if errs == 0 || zeroes == 0 {
		t.Errorf("the generator no longer reaches refused strategies (%d) or the both-zero rule (%d)", errs, zeroes)
	}
}

// FuzzParityRollingUpdateBounds lets the fuzzer look for fencepost strings
// on which ctrlkit and upstream disagree.
func FuzzParityRollingUpdateBounds(f *testing.F) {
	for _, s := range append(append([]string{}, goodPercents...), badPercents...) {
		f.Add(s, "25%", int32(10))
		f.Add("0", s, int32(7))
	}
	f.Fuzz(func(t *testing.T, surge, unavailable string, replicas int32) {
		c := boundsCase{surge: fencepostFromString(surge), unavailable: fencepostFromString(unavailable), replicas: replicas}
		if c.replicas < 0 || surgeBeyondInt32(c) {
			return // outside the compared domain, as in the generator
		}
		if msg := checkBounds(c); msg != "" {
			t.Fatalf("%s\ninput: %s", msg, describeBounds(c))
		}
	})
}

// fencepostFromString makes a number of a string that parses as an int32,
// and a string of any other.
func fencepostFromString(s string) *intstr.IntOrString {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		v := intstr.FromInt32(int32(n))
		return &v
	}
	v := intstr.FromString(s)
	return &v
}
