/*
 * Text that came from elsewhere (a deployment's log, a status message quoting its build's output, an API's error)
 * must not drive the terminal it is printed on: escape sequences set its title, clear it, rewrite what is shown,
 * write to the clipboard or make links; a bare CR or backspace overwrites a line.
 */

/**
 * The sequences a terminal acts on rather than shows: strings (OSC: title, links, clipboard; DCS, SOS, PM, APC) up to
 * their terminator, control sequences (CSI: cursor, clearing, colours), and the other escapes (ESC, intermediates, a final).
 */
const SEQUENCES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
  /(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)|(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b[ -/]*[0-~]/g;
/** C0 and C1 controls but newline and tab, DEL, and the bidirectional controls that reorder what a line shows. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same, as they can appear in JSON text (JSON.stringify escapes C0 controls but leaves these). */
const JSON_CONTROLS = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escaped = (character: string) => {
  const code = character.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
};

/**
 * `text` made safe to print on a terminal: escape sequences removed (colours included), CRLF as a newline, a tab as
 * two spaces, and every other control character shown as `\xHH` (`\uHHHH` for the bidirectional ones). Newlines stay.
 */
export function terminalText(text: string): string {
  return text.replace(SEQUENCES, "").replaceAll("\r\n", "\n").replaceAll("\t", "  ").replace(CONTROLS, escaped);
}

/**
 * JSON text with the characters a terminal acts on that JSON leaves as they are (C1, DEL, bidirectional controls) written
 * as `\uHHHH`: the same JSON. The service loggers pass every line through it.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(JSON_CONTROLS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `JSON.stringify(value, null, indent)`, escaped by escapeJsonControls. */
export function terminalJson(value: unknown, indent?: number): string {
  return escapeJsonControls(JSON.stringify(value, null, indent));
}
