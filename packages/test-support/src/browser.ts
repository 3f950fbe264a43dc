// Browser tests' helpers, imported as `@berth/test-support/browser` so that other tests do not load playwright-core.
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./paths.js";
import { type Browser, chromium, type Page } from "playwright-core";

/** A page of the size the screenshots are taken at, whose waits give up after `stepMs`. */
export async function newPage(browser: Browser, stepMs: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(stepMs);
  return page;
}

/** Where the dashboard tests leave their screenshots (CI keeps them as artifacts). */
export const SCREENSHOTS = join(REPO_ROOT, "test-artifacts", "dashboard");

/** Debian's chromium (.ci/run installs it); playwright-core downloads no browser of its own. */
function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  assert.ok(existsSync(path), `${path} is missing: install Debian's chromium (apt-get install -y chromium)`);
  return path;
}

/** A headless Chromium that reaches nothing but what the test opens (no updates, sync or background fetches). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Saves the whole page as test-artifacts/dashboard/<name>.png; answers the file's path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Keeps every Content-Security-Policy violation the page reports (the `securitypolicyviolation` event, listened to
 * by a script that runs before the page's own, outside its policy, in every document it loads) and every console
 * error naming the policy. Call before the first `goto`; the answer reads what was kept so far.
 */
export async function recordPolicyViolations(page: Page): Promise<() => string[]> {
  const kept: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) kept.push(message.text());
  });
  await page.exposeFunction("berthPolicyViolation", (text: string) => kept.push(text));
  await page.addInitScript(() => {
    const report = (window as unknown as { berthPolicyViolation: (text: string) => void }).berthPolicyViolation;
    document.addEventListener("securitypolicyviolation", (event) => report(`${event.violatedDirective} ${event.blockedURI}`));
  });
  return () => [...kept];
}

/** The dashboard's sign-in form at `url`, answered with `key` (and a workspace id); waits for the deployments' list. */
export async function signIn(page: Page, url: string, key: string, tenantId: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel("API key").fill(key);
  await page.getByLabel("Workspace (tenant id)").fill(tenantId);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Deployments" }).first().waitFor();
}
