package program

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// A new cluster (create mode) is waited for before anything in it: its API endpoint must answer
// /healthz, and the RuntimeClass Auto Mode adds must be there. The mocked cluster's endpoint is a
// real HTTPS server (mockgraph), read with the kubeconfig the mocked pulumi-eks returns.

// setPatience bounds the endpoint's and the RuntimeClass's waits for the test.
func setPatience(t *testing.T, api, rc components.Patience) {
	t.Helper()
	oldAPI, oldRC := components.APIEndpointPatience, components.RuntimeClassPatience
	components.APIEndpointPatience, components.RuntimeClassPatience = api, rc
	t.Cleanup(func() { components.APIEndpointPatience, components.RuntimeClassPatience = oldAPI, oldRC })
}

var (
	// giveUp is a wait meant to give up within the test, yet only after the fake API's HTTPS
	// answers the verdict is drawn from (a loaded machine took longer than 1 s for a few);
	// succeed one meant to end well, however loaded the machine (a long bound, a short interval).
	giveUp  = components.Patience{Timeout: 5 * time.Second, Interval: 20 * time.Millisecond}
	succeed = components.Patience{Timeout: time.Minute, Interval: 20 * time.Millisecond}
	never   = components.Patience{Timeout: time.Hour, Interval: time.Hour}
)

func kubernetesResources(rec *mockgraph.Recorder) []string {
	var out []string
	for _, r := range rec.All() {
		if strings.HasPrefix(r.Type, "kubernetes:") || r.Type == typeK8sProvider {
			out = append(out, r.Type+"::"+r.Name)
		}
	}
	return out
}

func TestNewClusterIsWaitedForBeforeAnyKubernetesResource(t *testing.T) {
	setPatience(t, succeed, succeed)
	rec, err := runProgram(t, nil, func(r *mockgraph.Recorder) { r.API.HealthzFailures, r.API.RuntimeClassMisses = 3, 2 })
	require.NoError(t, err)
	got := rec.APIRequests()
	assert.Equal(t, 4, got.Healthz, "three 503s, then 200")
	assert.Equal(t, 3, got.RuntimeClass, "two misses, then found")
	assert.NotEmpty(t, kubernetesResources(rec))

	// pulumi-eks v3.9.1 waits for /healthz itself only when endpointPublicAccess is set.
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	assert.True(t, inputBool(t, eks, "endpointPublicAccess"), "set explicitly: the public endpoint is how the program reaches the cluster")
}

func TestNewClusterWhoseEndpointNeverAnswersStopsBeforeAnyKubernetesResource(t *testing.T) {
	setPatience(t, giveUp, succeed)
	rec, err := runProgram(t, nil, func(r *mockgraph.Recorder) { r.API.HealthzFailures = 1 << 30 })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not answer GET /healthz within 5s (last: GET /healthz answered 503 Service Unavailable)")
	assert.Contains(t, err.Error(), "run `pulumi up` again")
	assert.Empty(t, kubernetesResources(rec), "not even the provider: it would find the cluster unreachable")
	assert.Zero(t, rec.APIRequests().RuntimeClass)
}

func TestNewClusterWithoutTheRuntimeClassSaysToRunUpAgain(t *testing.T) {
	setPatience(t, succeed, giveUp)
	rec, err := runProgram(t, nil, func(r *mockgraph.Recorder) {
		r.Absent[typeRuntimeClass+"/"+contract.RuntimeClassName] = true
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `RuntimeClass "isolated-sandbox" is not on the new cluster after waiting 5s (the API answered that it does not exist)`)
	assert.Contains(t, err.Error(), "Run `pulumi up` again")
	assert.NotContains(t, err.Error(), "does not exist'", "not the bare read error")
	// The first answer and one more after a 20 ms pause: how many more fit in the wait depends
	// on the machine's load.
	assert.Greater(t, rec.APIRequests().RuntimeClass, 1, "it kept asking")
	for _, typ := range []string{typeNamespace, typeTemplate, typePool, typeDeployment, typeScaledObject, typeChart, typeConfigFile} {
		assert.Empty(t, rec.Find(typ, ""), "%s must not be registered when the runtime is missing", typ)
	}
}

// A preview never waits: pulumi preview of a stack whose cluster exists reads, but does not wait.
func TestPreviewDoesNotWaitForTheCluster(t *testing.T) {
	t.Setenv("PULUMI_DRY_RUN", "true")
	setPatience(t, never, never)
	start := time.Now()
	rec, err := runProgram(t, nil, func(r *mockgraph.Recorder) { r.API.HealthzFailures, r.API.RuntimeClassMisses = 1<<30, 1<<30 })
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Equal(t, mockgraph.Requests{}, rec.APIRequests(), "a preview asks the endpoint nothing")
	mustFind(t, rec, typePool, "warm-pool")
}

// An existing cluster is not waited for: the RuntimeClass is read once, as before.
func TestExistingClusterIsNotWaitedFor(t *testing.T) {
	setPatience(t, never, never)
	start := time.Now()
	rec := mustRunProgram(t, existingAdoptConfig)
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Equal(t, mockgraph.Requests{}, rec.APIRequests())
	assert.Len(t, rec.Find(typeRuntimeClass, contract.RuntimeClassName), 1, "one read")
}

// EKS refuses cluster subnets in some zones, by zone ID (a zone's name differs per account).
func TestNewNetworkAvoidsZonesEKSDoesNotSupport(t *testing.T) {
	rec, err := runProgram(t, map[string]string{"clusterName": "c"}, func(r *mockgraph.Recorder) {
		r.Zones = zones("us-east-1a", "use1-az3", "us-east-1b", "use1-az1", "us-east-1c", "use1-az2", "us-east-1d", "use1-az4")
	})
	require.NoError(t, err)
	chosen := map[string]bool{}
	for _, s := range rec.Find(typeSubnet, "") {
		chosen[inputStr(t, s, "availabilityZone")] = true
	}
	assert.Equal(t, map[string]bool{"us-east-1b": true, "us-east-1c": true}, chosen, "use1-az3 (us-east-1a here) is skipped")

	invokes := rec.Invokes("aws:index/getAvailabilityZones:getAvailabilityZones")
	require.Len(t, invokes, 1)
	args := invokes[0].Args.Mappable()
	assert.Equal(t, []any{"use1-az3", "usw1-az2", "cac1-az3"}, args["excludeZoneIds"], "the provider leaves them out too")
	assert.Equal(t, []any{map[string]any{"name": "zone-type", "values": []any{"availability-zone"}}}, args["filters"], "no Local or Wavelength Zones")
	assert.Equal(t, "available", args["state"])

	_, err = runProgram(t, nil, func(r *mockgraph.Recorder) {
		r.Zones = zones("us-west-1a", "usw1-az2", "us-west-1c", "usw1-az1")
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EKS does not support us-west-1a (usw1-az2)")
}

// zones lists zones as EC2 does for one account: name, ID, name, ID, ...
func zones(nameID ...string) []mockgraph.Zone {
	var out []mockgraph.Zone
	for i := 0; i+1 < len(nameID); i += 2 {
		out = append(out, mockgraph.Zone{Name: nameID[i], ID: nameID[i+1]})
	}
	return out
}
