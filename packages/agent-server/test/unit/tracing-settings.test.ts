import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { tracingSettingsFromEnv } from "../../src/config/settings.js";

describe("tracing settings from the environment", () => {
  it("are off unless one of LangChain's switches says true", () => {
    assert.equal(tracingSettingsFromEnv({}), undefined);
    assert.equal(tracingSettingsFromEnv({ LANGSMITH_TRACING: "false", LANGSMITH_ENDPOINT: "http://x" }), undefined);
    assert.equal(tracingSettingsFromEnv({ LANGSMITH_TRACING: "1" }), undefined, "core only honours the string true");
    for (const name of ["LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"]) {
      assert.ok(tracingSettingsFromEnv({ [name]: "true" }), name);
    }
  });

  it("read the LANGSMITH_ names first, the older LANGCHAIN_ ones next, then LangSmith's defaults", () => {
    assert.deepEqual(tracingSettingsFromEnv({ LANGSMITH_TRACING: "true" }), {
      endpoint: "https://api.smith.langchain.com",
      apiKey: undefined,
      project: "default",
      feedbackUrlTtlMs: 3 * 60 * 60 * 1000,
      workspaceId: undefined,
      samplingRate: 1,
    });
    assert.deepEqual(
      tracingSettingsFromEnv({
        LANGCHAIN_TRACING_V2: "true",
        LANGCHAIN_ENDPOINT: "http://old/api/v1",
        LANGSMITH_ENDPOINT: "http://cp:8000/api/v1/",
        LANGCHAIN_API_KEY: "old-key",
        LANGCHAIN_PROJECT: "old-project",
        BERTH_FEEDBACK_URL_TTL_SECONDS: "60",
        LANGCHAIN_WORKSPACE_ID: "old-workspace",
        LANGSMITH_TRACING_SAMPLING_RATE: "0.25",
      }),
      {
        endpoint: "http://cp:8000/api/v1",
        apiKey: "old-key",
        project: "old-project",
        feedbackUrlTtlMs: 60_000,
        workspaceId: "old-workspace",
        samplingRate: 0.25,
      },
    );
  });

  it("trace every run when the sampling rate is not a share from 0 to 1, as the langsmith client does", () => {
    for (const rate of ["2", "-1", "half", ""]) {
      const settings = tracingSettingsFromEnv({ LANGSMITH_TRACING: "true", LANGSMITH_TRACING_SAMPLING_RATE: rate });
      assert.equal(settings?.samplingRate, 1, rate);
    }
    assert.equal(tracingSettingsFromEnv({ LANGSMITH_TRACING: "true", LANGSMITH_TRACING_SAMPLING_RATE: "0" })?.samplingRate, 0);
  });

  it("refuse a feedback URL lifetime that is not a positive number", () => {
    for (const ttl of ["0", "-5", "soon"]) {
      assert.throws(
        () => tracingSettingsFromEnv({ LANGSMITH_TRACING: "true", BERTH_FEEDBACK_URL_TTL_SECONDS: ttl }),
        /BERTH_FEEDBACK_URL_TTL_SECONDS/,
      );
    }
  });
});
