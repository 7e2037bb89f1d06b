package main

import (
	"context"
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	pprovider "github.com/pulumi/pulumi/sdk/v3/go/pulumi/provider"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"warmpool.local/warm-pool-autoscaling-keda/program"
)

// server is the plugin's gRPC side: the schema, and Construct for the one component. It is the
// SDK's componentProvider (sdk/go/pulumi/provider) except Construct, which reads the inputs as
// plain values first: the component reads them the way the program reads its stack config.
type server struct {
	pulumirpc.UnimplementedResourceProviderServer
	host   *pprovider.HostClient
	schema []byte

	// stacks is what the AutoscaledWarmPools constructed so far hold, per stack: a component
	// whose namespaces or cluster-wide installs clash with another's is refused, naming both.
	stacks program.Stacks
}

func (s *server) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: Version}, nil
}

func (s *server) GetSchema(_ context.Context, req *pulumirpc.GetSchemaRequest) (*pulumirpc.GetSchemaResponse, error) {
	if v := req.GetVersion(); v != 0 {
		return nil, fmt.Errorf("unsupported schema version %d", v)
	}
	return &pulumirpc.GetSchemaResponse{Schema: string(s.schema)}, nil
}

func (s *server) Configure(context.Context, *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	return &pulumirpc.ConfigureResponse{AcceptSecrets: true, SupportsPreview: true, AcceptResources: true, AcceptOutputs: true}, nil
}

func (s *server) Construct(ctx context.Context, req *pulumirpc.ConstructRequest) (*pulumirpc.ConstructResponse, error) {
	if req.GetType() != program.AutoscaledWarmPoolType {
		return nil, status.Errorf(codes.InvalidArgument, "%s serves %s only, not %s", Name, program.AutoscaledWarmPoolType, req.GetType())
	}
	// Nothing in the cluster may land on an ambient kubeconfig (the program disables the default
	// kubernetes provider for the same reason): the caller names its cluster's provider.
	if _, ok := req.GetProviders()["kubernetes"]; !ok {
		return nil, fmt.Errorf("%s %q has no kubernetes provider: pass your cluster's in its providers option "+
			"(YAML `options: {providers: [${cluster}]}`, Go `pulumi.Providers(cluster)`, TypeScript `{providers: [cluster]}`); "+
			"it never falls back to an ambient kubeconfig", program.AutoscaledWarmPoolType, req.GetName())
	}
	props, err := plugin.UnmarshalProperties(req.GetInputs(), plugin.MarshalOptions{
		KeepUnknowns: true, KeepSecrets: true, KeepResources: true, KeepOutputValues: true,
	})
	if err != nil {
		return nil, fmt.Errorf("reading the inputs of %s %q: %w", program.AutoscaledWarmPoolType, req.GetName(), err)
	}
	in, unknown, err := configValues(props, req.GetDryRun())
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", program.AutoscaledWarmPoolType, req.GetName(), err)
	}
	return pprovider.Construct(ctx, req, s.host.EngineConn(), func(pctx *pulumi.Context, _, name string, given pprovider.ConstructInputs, opts pulumi.ResourceOption) (*pprovider.ConstructResult, error) {
		if len(unknown) > 0 {
			m, err := given.Map()
			if err != nil {
				return nil, err
			}
			if in.Unknown, err = unknownOutputs(unknown, m); err != nil {
				return nil, err
			}
		}
		c, err := s.stacks.NewAutoscaledWarmPool(pctx, name, in, opts)
		if err != nil {
			return nil, err
		}
		return &pprovider.ConstructResult{URN: c.URN(), State: c.Outputs}, nil
	})
}

func (s *server) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

func (s *server) Attach(_ context.Context, req *pulumirpc.PluginAttach) (*emptypb.Empty, error) {
	host, err := pprovider.NewHostClient(req.GetAddress())
	if err != nil {
		return nil, err
	}
	s.host = host
	return &emptypb.Empty{}, nil
}

func (s *server) GetMapping(context.Context, *pulumirpc.GetMappingRequest) (*pulumirpc.GetMappingResponse, error) {
	return &pulumirpc.GetMappingResponse{}, nil
}
