//! [`GaosMcpServer`]: the rmcp [`ServerHandler`] of the seat tools. It only
//! finds the seat a call is for ([`SeatSource`]) and converts between MCP
//! and [`crate::tools`]; the tools do the rest.

use gaos_session::ErrorCode;
use std::sync::Arc;

use gaos_session::SessionError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::error::ToolError;
use crate::registry::{McpCaller, SeatRegistry};
use crate::seat::{Attachment, SeatSession};
use crate::tools::{self, ToolOutput};

/// What the server tells a client at initialize.
pub const INSTRUCTIONS: &str = "You drive one seat of a GAOS game session. Call observe to see your view, whose \
move it is and the legal actions; call act with {\"index\": n} (a position in the legal action list) or \
{\"command\": ...} (one of the legal action objects) to move; observe with waitMs waits for your turn. When the \
game is over call finalize, then replay. pause and resume control a safety pause; status shows your seat's \
controller lease. You only ever see your own seat's view.";

/// Where the seat of a tool call comes from.
#[derive(Debug, Clone)]
pub enum SeatSource {
    /// One seat, attached at startup (stdio: `gaos mcp --session --seat`).
    Fixed(Arc<Attachment>),
    /// The seat of the request's bearer token (the host's `/mcp` mount):
    /// attached on first use and kept per token.
    Bearer(Arc<SeatRegistry>),
}

/// The MCP server of the seat tools.
#[derive(Debug, Clone)]
pub struct GaosMcpServer {
    seats: SeatSource,
}

impl GaosMcpServer {
    /// A server for the seats of `source`.
    pub fn new(seats: SeatSource) -> Self {
        GaosMcpServer { seats }
    }

    async fn seat(&self, context: &RequestContext<RoleServer>) -> Result<Arc<dyn SeatSession>, ToolError> {
        let attached = match &self.seats {
            SeatSource::Fixed(attachment) => attachment.seat().await,
            SeatSource::Bearer(registry) => {
                let caller = context
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|parts| parts.extensions.get::<McpCaller>())
                    .ok_or_else(|| {
                        ToolError::new(
                            ErrorCode::Unauthorized,
                            "this request carries no seat token (Authorization: Bearer)",
                        )
                    })?;
                registry.attachment(caller).seat().await
            }
        };
        attached.map_err(|e| not_attached(&e))
    }
}

fn not_attached(error: &SessionError) -> ToolError {
    let mut error = ToolError::from_session(error);
    error.message = format!("the seat could not be attached: {}", error.message);
    error
}

/// The MCP tool list of [`tools::tool_specs`].
pub fn mcp_tools() -> Vec<Tool> {
    tools::tool_specs()
        .into_iter()
        .map(|spec| {
            let mut tool = Tool::new(spec.name, spec.description, Arc::new(spec.input_schema));
            tool.title = Some(spec.title.to_owned());
            let annotations = ToolAnnotations::new().read_only(spec.read_only);
            tool.annotations = Some(if spec.read_only { annotations } else { annotations.destructive(false) });
            tool
        })
        .collect()
}

/// A tool output as an MCP result: the text as content, the JSON as
/// structured content, `isError` for tool errors.
pub fn to_call_tool_result(output: ToolOutput) -> CallToolResult {
    let structured = serde_json::to_value(gaos_json::Value::Object(output.structured))
        .expect("gaos JSON values are serde_json values");
    let mut result = if output.is_error {
        CallToolResult::error(vec![ContentBlock::text(output.text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(output.text)])
    };
    result.structured_content = Some(structured);
    result
}

impl ServerHandler for GaosMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("gaos-mcp", env!("CARGO_PKG_VERSION"))
                    .with_title("GAOS seat")
                    .with_description("Drive one seat of a GAOS game session"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(mcp_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tools::is_tool(&request.name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}; this server has observe, act, pause, resume, status, finalize and replay",
                    request.name
                ),
                None,
            ));
        }
        let output = match self.seat(&context).await {
            Ok(seat) => tools::call_tool(seat.as_ref(), &request.name, request.arguments.as_ref()).await,
            Err(error) => ToolOutput::error(&error),
        };
        Ok(to_call_tool_result(output).into())
    }
}
