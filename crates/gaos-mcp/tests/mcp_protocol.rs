//! The MCP surface itself, through rmcp's own client over an in-memory
//! pipe: the tool list and schemas, results with text and structured
//! content, tool errors (`isError: true`) for bad input and host refusals,
//! and a protocol error only for a tool that does not exist.

mod support;

use std::sync::Arc;

use gaos_mcp::remote::LeaseMode;
use gaos_mcp::seat::Attachment;
use gaos_mcp::server::{GaosMcpServer, SeatSource};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value as Json, json};
use support::*;

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

fn arguments(value: Json) -> serde_json::Map<String, Json> {
    value.as_object().cloned().expect("arguments are an object")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_answer_text_and_structured_content_and_fail_as_tool_errors() {
    let test = start_host().await;
    let created = test.create(r#"{"game":"conformance/hilo","seed":7,"level":{"handSize":2,"maxCard":1000000}}"#).await;
    let bob = test.attach(&created, "bob", LeaseMode::Claim { duration_ms: 60_000 }).await;
    let server = GaosMcpServer::new(SeatSource::Fixed(Arc::new(Attachment::attached(bob))));
    let (server_io, client_io) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.expect("the MCP handshake");

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["observe", "act", "pause", "resume", "status", "finalize", "replay", "reset", "transcript"]);
    let act = tools.iter().find(|t| t.name == "act").expect("act");
    let properties = act.input_schema.get("properties").and_then(Json::as_object).expect("act's properties");
    for key in ["action", "command", "index"] {
        assert!(properties.contains_key(key), "act takes {key}: {properties:?}");
    }
    assert_eq!(act.input_schema.get("additionalProperties"), Some(&json!(false)));
    let observe = tools.iter().find(|t| t.name == "observe").expect("observe");
    assert_eq!(observe.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));

    let seen = client.call_tool(CallToolRequestParams::new("observe")).await.expect("tools/call");
    assert_eq!(seen.is_error, Some(false));
    let text = text_of(&seen);
    assert!(text.contains("Seat bob") && text.contains("Your hand: ") && text.contains("Legal: card 0|1"), "{text}");
    let structured = seen.structured_content.expect("structured content");
    assert_eq!(structured["turn"], json!("yours"));
    assert_eq!(structured["legalActions"], json!([{"card": 0}, {"card": 1}]));

    let bad = client
        .call_tool(CallToolRequestParams::new("act").with_arguments(arguments(json!({"index": "first"}))))
        .await
        .expect("a tool error is a result, not a protocol failure");
    assert_eq!(bad.is_error, Some(true));
    assert!(text_of(&bad).starts_with("error [invalid_argument]: act: \"index\""), "{}", text_of(&bad));
    assert_eq!(bad.structured_content.as_ref().map(|s| s["code"].clone()), Some(json!("invalid_argument")));

    let illegal = client
        .call_tool(CallToolRequestParams::new("act").with_arguments(arguments(json!({"command": {"card": 7}}))))
        .await
        .expect("a host refusal is a tool error");
    assert_eq!(illegal.is_error, Some(true));
    let refusal = illegal.structured_content.expect("the host's error as JSON");
    assert_eq!((refusal["code"].clone(), refusal["status"].clone()), (json!("illegal_command"), json!(422)));

    let played = client
        .call_tool(CallToolRequestParams::new("act").with_arguments(arguments(json!({"command": {"card": 1}}))))
        .await
        .expect("act");
    assert_eq!(played.is_error, Some(false), "{}", text_of(&played));
    assert_eq!(played.structured_content.expect("structured")["kind"], json!("pending"));

    let unknown = client.call_tool(CallToolRequestParams::new("teleport")).await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error: {unknown:?}");
    client.cancel().await.expect("close the client");
}
