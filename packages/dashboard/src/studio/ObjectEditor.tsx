import { useId } from "react";
import { fieldValue, formFields, nonFormProperties, parseObject, type Schema, schemaErrors } from "./schema";

export interface ObjectEditorProps {
  /** What is edited, e.g. "Config": names the JSON box ("Config (JSON)") and the errors. */
  label: string;
  schema: Schema | undefined;
  text: string;
  onText: (text: string) => void;
  /** Rows of the JSON box. */
  rows?: number;
}

/** The problems of an editor's text under its schema, for the Run button to wait on. */
export function editorErrors(text: string, schema: Schema | undefined): string[] {
  const parsed = parseObject(text);
  return "error" in parsed ? [parsed.error] : schemaErrors(parsed.value, schema);
}

/**
 * A JSON object edited as text, checked against its schema as typed, with a form for the schema's string,
 * number and boolean properties kept in step with the text (the text is what is sent).
 */
export function ObjectEditor({ label, schema, text, onText, rows = 4 }: ObjectEditorProps) {
  const id = useId();
  const parsed = parseObject(text);
  const value = "value" in parsed ? parsed.value : undefined;
  const errors = editorErrors(text, schema);
  const fields = formFields(schema);
  const jsonOnly = fields.length > 0 ? nonFormProperties(schema) : [];
  const setField = (name: string, entered: unknown) => {
    if (!value) return;
    const changed = { ...value };
    if (entered === undefined) delete changed[name];
    else changed[name] = entered;
    onText(JSON.stringify(changed, null, 2));
  };
  return (
    <fieldset className="studio-editor">
      <legend>{label}</legend>
      {fields.length > 0 && (
        <div className="studio-form">
          {fields.map((field) => {
            const current = value?.[field.name];
            const fieldId = `${id}-${field.name}`;
            if (field.kind === "boolean") {
              return (
                <label key={field.name} className="studio-check">
                  <input
                    type="checkbox"
                    disabled={!value}
                    checked={current === true}
                    onChange={(event) => setField(field.name, event.target.checked)}
                  />
                  {field.name}
                </label>
              );
            }
            const shown = current === undefined ? "" : typeof current === "string" ? current : JSON.stringify(current);
            return (
              <div key={field.name} className="studio-field">
                <label htmlFor={fieldId}>
                  {field.name}
                  {field.required ? " (required)" : ""}
                </label>
                {field.options ? (
                  <select
                    id={fieldId}
                    disabled={!value}
                    value={shown}
                    onChange={(event) => setField(field.name, fieldValue(field, event.target.value))}
                  >
                    <option value="">(unset)</option>
                    {field.options.map((option) => (
                      <option key={option}>{option}</option>
                    ))}
                  </select>
                ) : (
                  <input
                    id={fieldId}
                    type={field.kind === "string" ? "text" : "number"}
                    disabled={!value}
                    value={shown}
                    title={field.description}
                    onChange={(event) => setField(field.name, fieldValue(field, event.target.value))}
                  />
                )}
              </div>
            );
          })}
        </div>
      )}
      {jsonOnly.length > 0 && <p className="studio-muted">In the JSON only: {jsonOnly.join(", ")}.</p>}
      <label htmlFor={`${id}-json`}>{label} (JSON)</label>
      <textarea
        id={`${id}-json`}
        className="studio-json"
        rows={rows}
        spellCheck={false}
        value={text}
        aria-invalid={errors.length > 0}
        aria-describedby={errors.length > 0 ? `${id}-errors` : undefined}
        onChange={(event) => onText(event.target.value)}
      />
      {errors.length > 0 && (
        <ul id={`${id}-errors`} className="studio-errors" role="alert" aria-label={`${label} errors`}>
          {errors.map((error) => (
            <li key={error}>
              {label}: {error}
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}
