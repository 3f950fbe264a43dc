/** The part of JSON Schema the Studio reads: enough to check a config, a context or an input and draw a form. */
export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  description?: string;
  title?: string;
  default?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
}

export type FieldKind = "string" | "number" | "integer" | "boolean";

export interface FormField {
  name: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  options?: string[];
}

/** A schema as the server gave it (`null` when the graph has none), as an object schema or undefined. */
export function asSchema(value: unknown): Schema | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Schema) : undefined;
}

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === "string") return [schema.type];
  const alternatives = schema.anyOf ?? schema.oneOf;
  return alternatives ? alternatives.flatMap(typesOf) : [];
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function fits(value: unknown, types: string[]): boolean {
  if (types.length === 0) return true;
  const kind = kindOf(value);
  return types.includes(kind) || (kind === "integer" && types.includes("number"));
}

/**
 * What is wrong with `value` under `schema`, one line each, checked one level deep (an object, its required
 * keys, its properties' types and enums): the server checks the rest, and says so when a run starts.
 */
export function schemaErrors(value: unknown, schema: Schema | undefined): string[] {
  if (!schema) return [];
  if (!fits(value, typesOf(schema).length > 0 ? typesOf(schema) : schema.properties ? ["object"] : [])) {
    return [`must be ${typesOf(schema).join(" or ") || "an object"}, not ${kindOf(value)}`];
  }
  if (kindOf(value) !== "object") return [];
  const object = value as Record<string, unknown>;
  const errors: string[] = [];
  for (const name of schema.required ?? []) {
    if (!(name in object)) errors.push(`"${name}" is required`);
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!(name in object)) continue;
    const types = typesOf(property);
    if (!fits(object[name], types)) errors.push(`"${name}" must be ${types.join(" or ")}, not ${kindOf(object[name])}`);
    else if (property.enum && !property.enum.some((option) => option === object[name])) {
      errors.push(`"${name}" must be one of ${property.enum.map((option) => JSON.stringify(option)).join(", ")}`);
    }
  }
  return errors;
}

/** The fields of a form for the schema's string, number and boolean properties (the others are edited as JSON). */
export function formFields(schema: Schema | undefined): FormField[] {
  const required = new Set(schema?.required ?? []);
  return Object.entries(schema?.properties ?? {}).flatMap(([name, property]): FormField[] => {
    const kind = typesOf(property).find((type): type is FieldKind => ["string", "number", "integer", "boolean"].includes(type));
    const simple = typesOf(property).every((type) => type === kind || type === "null");
    if (!kind || !simple) return [];
    const options = property.enum?.filter((option): option is string => typeof option === "string");
    return [{ name, kind, required: required.has(name), description: property.description, options }];
  });
}

/** The schema's properties no form field edits: objects, arrays, references. */
export function nonFormProperties(schema: Schema | undefined): string[] {
  const fields = new Set(formFields(schema).map((field) => field.name));
  return Object.keys(schema?.properties ?? {}).filter((name) => !fields.has(name));
}

/** Parses JSON text that must hold an object; an empty text is an empty object. */
export function parseObject(text: string): { value: Record<string, unknown> } | { error: string } {
  if (text.trim() === "") return { value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (kindOf(value) !== "object") return { error: `must be a JSON object, not ${kindOf(value)}` };
    return { value: value as Record<string, unknown> };
  } catch (error) {
    return { error: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** A form field's text as the JSON value it stands for; an empty text removes the key. */
export function fieldValue(field: FormField, text: string | boolean): unknown {
  if (field.kind === "boolean") return text === true;
  if (typeof text !== "string" || text === "") return undefined;
  if (field.kind === "string") return text;
  const number = Number(text);
  // A text that is no number stays text, so the check under the form says what is wrong.
  return Number.isFinite(number) ? number : text;
}

/** Whether the graph's input is a conversation: its input schema has `messages`. */
export function takesMessages(input: Schema | undefined): boolean {
  return Boolean(input?.properties && "messages" in input.properties);
}
