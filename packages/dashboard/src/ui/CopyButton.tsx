import { useEffect, useState } from "react";

/**
 * Puts `text` on the clipboard. The Clipboard API exists only in a secure context (https, or localhost): a control
 * plane reached over plain http by another name falls back to a selected text field and the copy command.
 */
async function writeClipboard(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) return navigator.clipboard.writeText(text);
  const field = document.createElement("textarea");
  field.value = text;
  field.setAttribute("readonly", "");
  // Set through the DOM, which the page's policy allows (no inline <style>).
  field.style.position = "fixed";
  field.style.opacity = "0";
  document.body.append(field);
  field.select();
  try {
    if (!document.execCommand("copy")) throw new Error("copy refused");
  } finally {
    field.remove();
  }
}

/**
 * Copies `value` to the clipboard (a write: the page's Permissions-Policy turns off clipboard reads only); says
 * "Copied" for a moment. `label` names what is copied, for screen readers ("Copy URL").
 */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = setTimeout(() => setState("idle"), 1500);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await writeClipboard(value);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  return (
    <button
      type="button"
      className="copy"
      aria-label={label}
      title={state === "failed" ? "The browser refused the clipboard: select the text instead" : label}
      data-state={state}
      onClick={() => void copy()}
    >
      <span aria-live="polite">{state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : "Copy"}</span>
    </button>
  );
}
