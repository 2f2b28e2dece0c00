//! The reference SDK's manifest template, shared by the benchmark tests.

/// The `gaos benchmark init` template of the reference SDK.
pub const TEMPLATE: &str = r#"{
  "schema": "gaos.benchmark-manifest.v1",
  "benchmark": { "id": "example", "version": "1.0.0", "adapter": "./adapter.mjs" },
  "tasks": [{ "id": "task-a", "seeds": [101], "episodes": 1, "maxSteps": 100 }],
  "scoring": { "plugin": "./score.mjs", "aggregation": "mean" },
  "submission": { "requireSignedSeats": false, "requireCompleteCoverage": true }
}"#;

pub fn manifest_with(tasks: &str, plugin: &str, aggregation: &str) -> String {
    format!(
        r#"{{"schema":"gaos.benchmark-manifest.v1","benchmark":{{"id":"toy","version":"1","adapter":"toy/game"}},
        "tasks":{tasks},"scoring":{{"plugin":"{plugin}","aggregation":"{aggregation}"}},
        "submission":{{"requireSignedSeats":false,"requireCompleteCoverage":true}}}}"#
    )
}
