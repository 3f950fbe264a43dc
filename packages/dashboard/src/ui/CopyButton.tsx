import { useState } from "react";

/**
 * Copies `value` to the clipboard (a write: the page's Permissions-Policy turns off clipboard reads only); says
 * "Copied" for a moment. `label` names what is copied, for screen readers ("Copy URL").
 */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 1500);
  };
  return (
    <button type="button" className="copy" aria-label={label} title={label} onClick={() => void copy()}>
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : "Copy"}
    </button>
  );
}
