import type { CallbackOutcome } from "../../services/auth-flows.js";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** The small page the user's browser lands on after consent: what happened, with the provider's error when there was one. */
export function consentPage(outcome: { title: string; message: string; ok: boolean }): string {
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    `<title>${escapeHtml(outcome.title)}</title>`,
    "<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}",
    ".ok{color:#116329}.failed{color:#a40e26}code{word-break:break-all}</style></head><body>",
    `<h1 class="${outcome.ok ? "ok" : "failed"}">${escapeHtml(outcome.title)}</h1>`,
    `<p>${escapeHtml(outcome.message)}</p>`,
    "</body></html>",
  ].join("\n");
}

export function callbackPage(outcome: CallbackOutcome): string {
  return outcome.status === "completed"
    ? consentPage({
        ok: true,
        title: `Connected to ${outcome.provider_name}`,
        message: "You can close this window and go back to the agent.",
      })
    : consentPage({
        ok: false,
        title: `${outcome.provider_name} did not connect`,
        message: `The provider answered: ${outcome.error ?? "an unknown error"}`,
      });
}
