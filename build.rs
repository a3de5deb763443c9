//! With the `connect` feature: the server side of Spark Connect's gRPC service. Its messages
//! come from the `apache-spark-connect-proto` crate (which generates only the client), so the
//! service is described here by its methods and tonic generates the server trait over them.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "connect")]
    spark_connect_server();
}

#[cfg(feature = "connect")]
fn spark_connect_server() {
    use tonic_build::manual::{Builder, Method, Service};
    // (Rust name, gRPC name, request, response, client streams, server streams), as
    // `service SparkConnectService` in Spark's base.proto.
    let methods = [
        ("execute_plan", "ExecutePlan", "ExecutePlanRequest", "ExecutePlanResponse", false, true),
        ("analyze_plan", "AnalyzePlan", "AnalyzePlanRequest", "AnalyzePlanResponse", false, false),
        ("config", "Config", "ConfigRequest", "ConfigResponse", false, false),
        ("add_artifacts", "AddArtifacts", "AddArtifactsRequest", "AddArtifactsResponse", true, false),
        ("artifact_status", "ArtifactStatus", "ArtifactStatusesRequest", "ArtifactStatusesResponse", false, false),
        ("interrupt", "Interrupt", "InterruptRequest", "InterruptResponse", false, false),
        ("reattach_execute", "ReattachExecute", "ReattachExecuteRequest", "ExecutePlanResponse", false, true),
        ("release_execute", "ReleaseExecute", "ReleaseExecuteRequest", "ReleaseExecuteResponse", false, false),
        ("release_session", "ReleaseSession", "ReleaseSessionRequest", "ReleaseSessionResponse", false, false),
        ("fetch_error_details", "FetchErrorDetails", "FetchErrorDetailsRequest", "FetchErrorDetailsResponse", false, false),
        ("clone_session", "CloneSession", "CloneSessionRequest", "CloneSessionResponse", false, false),
        ("get_status", "GetStatus", "GetStatusRequest", "GetStatusResponse", false, false),
    ];
    let mut service = Service::builder().name("SparkConnectService").package("spark.connect");
    for (name, route, input, output, client_streaming, server_streaming) in methods {
        let mut method = Method::builder()
            .name(name)
            .route_name(route)
            .input_type(format!("::spark_connect_proto::{input}"))
            .output_type(format!("::spark_connect_proto::{output}"))
            .codec_path("::tonic_prost::ProstCodec");
        if client_streaming {
            method = method.client_streaming();
        }
        if server_streaming {
            method = method.server_streaming();
        }
        service = service.method(method.build());
    }
    Builder::new().build_client(false).build_transport(false).compile(&[service.build()]);
}
