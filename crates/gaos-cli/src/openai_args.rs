//! The `openai` driver options shared by `gaos play` and `gaos bench run`.

use gaos_runner::drivers::OpenAiConfig;

/// Flattened into the commands that can run `openai` drivers.
#[derive(clap::Args, Debug, Clone)]
pub struct OpenAiArgs {
    /// openai drivers: endpoint base URL (requests go to BASE/chat/completions).
    #[arg(long, default_value = gaos_runner::drivers::openai::DEFAULT_BASE_URL)]
    base_url: String,
    /// openai drivers: model (openai:MODEL overrides it per seat).
    #[arg(long, default_value = gaos_runner::drivers::openai::DEFAULT_MODEL)]
    model: String,
    /// openai drivers: environment variable with the API key (default: OPENAI_API_KEY, optional).
    #[arg(long)]
    api_key_env: Option<String>,
    /// openai drivers: re-asks after an illegal answer.
    #[arg(long, default_value_t = 2)]
    max_reasks: u32,
}

impl OpenAiArgs {
    /// The driver configuration these options describe.
    pub fn config(&self) -> OpenAiConfig {
        OpenAiConfig {
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
            max_reasks: self.max_reasks,
            ..OpenAiConfig::default()
        }
    }
}
