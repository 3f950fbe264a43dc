import type { RunSettings } from "./RunPanel";

/**
 * A run panel's settings (config, context, input, breakpoints) per deployment and assistant, kept in the tab's
 * sessionStorage beside the key: a reload keeps what was typed, a new tab starts from the assistant's own.
 */
const keyOf = (deploymentId: string, assistantId: string) => `berth.studio.${deploymentId}.${assistantId}`;

export function loadSettings(deploymentId: string, assistantId: string): RunSettings | undefined {
  try {
    const saved: unknown = JSON.parse(sessionStorage.getItem(keyOf(deploymentId, assistantId)) ?? "null");
    return isSettings(saved) ? saved : undefined;
  } catch {
    return undefined;
  }
}

export function saveSettings(deploymentId: string, assistantId: string, settings: RunSettings): void {
  try {
    sessionStorage.setItem(keyOf(deploymentId, assistantId), JSON.stringify(settings));
  } catch {
    // storage full or refused: the settings last as long as the page
  }
}

function isSettings(value: unknown): value is RunSettings {
  const saved = value as Partial<RunSettings> | null;
  return (
    typeof saved?.config === "string" &&
    typeof saved.context === "string" &&
    typeof saved.input === "string" &&
    Array.isArray(saved.interruptBefore) &&
    Array.isArray(saved.interruptAfter)
  );
}
