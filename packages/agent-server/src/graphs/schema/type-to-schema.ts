import { ts } from "ts-morph";
import { BASE_MESSAGE_REF, MESSAGE_DEFINITIONS } from "./message-definitions.js";
import { DRAFT_07, type JsonSchema } from "./types.js";

const { TypeFlags, ObjectFlags, SymbolFlags } = ts;

/** Deeper than this, a type is left open (`{}`): a guard against types that expand forever. */
const MAX_DEPTH = 24;

type Primitive = string | number | boolean;

/**
 * Turns TypeScript types into JSON schemas, in the shape the reference server
 * gives: literal unions become enums, interfaces and classes become
 * `#/definitions/<Name>` references, message types become BaseMessage.
 * `required` lists the properties the type does not mark optional.
 */
export class TypeToSchema {
  private definitions: Record<string, JsonSchema> = {};
  private definitionNames = new Map<ts.Type, string>();
  private expanding = new Set<ts.Type>();
  private depth = 0;

  constructor(
    private readonly checker: ts.TypeChecker,
    /** `BaseMessage` of @langchain/core, when the program resolves it. */
    private readonly baseMessage: ts.Type | undefined,
  ) {}

  /**
   * The schema of a state, input, output or config type: an object schema
   * with its definitions, or null when the type says nothing (any, never, or
   * an object without named properties).
   */
  root(type: ts.Type): JsonSchema | null {
    this.definitions = {};
    this.definitionNames = new Map();
    if (type.flags & (TypeFlags.Any | TypeFlags.Unknown | TypeFlags.Never)) return null;
    if (!(type.flags & TypeFlags.Object) && !(type.flags & TypeFlags.Intersection)) return null;
    const body = this.objectSchema(type);
    if (!body.properties) return null;
    const definitions = Object.keys(this.definitions).length > 0 ? { definitions: this.definitions } : {};
    return { ...body, ...definitions, $schema: DRAFT_07 };
  }

  /** A type's schema; undefined for what JSON cannot hold (undefined, functions, symbols, never). */
  private convert(type: ts.Type): JsonSchema | undefined {
    if (this.depth >= MAX_DEPTH) return {};
    this.depth += 1;
    try {
      return this.convertType(type);
    } finally {
      this.depth -= 1;
    }
  }

  private convertType(type: ts.Type): JsonSchema | undefined {
    const flags = type.flags;
    if (flags & (TypeFlags.Any | TypeFlags.Unknown)) return {};
    if (flags & (TypeFlags.Never | TypeFlags.Undefined | TypeFlags.Void | TypeFlags.ESSymbolLike)) return undefined;
    if (flags & TypeFlags.Null) return { type: "null" };
    if (this.isMessageArray(type)) return this.messageArray();
    if (this.isMessage(type)) return this.messageRef();
    if (flags & TypeFlags.Boolean) return { type: "boolean" };
    if (flags & TypeFlags.Union) return this.unionSchema((type as ts.UnionType).types);
    const literal = literalValue(type);
    if (literal !== undefined) return { type: typeof literal, const: literal };
    if (flags & (TypeFlags.String | TypeFlags.TemplateLiteral | TypeFlags.StringMapping)) return { type: "string" };
    if (flags & TypeFlags.Number) return { type: "number" };
    if (flags & (TypeFlags.BigInt | TypeFlags.BigIntLiteral)) return { type: "integer" };
    if (flags & TypeFlags.Intersection) return this.intersectionSchema(type as ts.IntersectionType);
    if (flags & TypeFlags.Object) return this.objectTypeSchema(type as ts.ObjectType);
    // Type parameters, conditional and indexed types the checker left unresolved: anything.
    return {};
  }

  private objectTypeSchema(type: ts.ObjectType): JsonSchema | undefined {
    const checker = this.checker;
    if (checker.isTupleType(type)) {
      const target = (type as ts.TypeReference).target as ts.TupleType;
      const items = checker.getTypeArguments(type as ts.TypeReference).map((item) => this.convert(item) ?? {});
      return target.hasRestElement
        ? { type: "array", items: items[items.length - 1] ?? {}, minItems: target.minLength }
        : { type: "array", items, minItems: target.minLength, maxItems: target.fixedLength };
    }
    if (checker.isArrayType(type)) {
      const [element] = checker.getTypeArguments(type as ts.TypeReference);
      return { type: "array", items: (element && this.convert(element)) ?? {} };
    }
    const symbolName = type.getSymbol()?.getName();
    if (symbolName === "Date") return { type: "string", format: "date-time" };
    if (type.getCallSignatures().length > 0 && type.getProperties().length === 0) return undefined;
    if (isNamedObject(type)) return this.reference(type);
    if (this.expanding.has(type)) return {};
    this.expanding.add(type);
    try {
      return this.objectSchema(type);
    } finally {
      this.expanding.delete(type);
    }
  }

  /** Interfaces and classes go to `definitions` once (which also ends recursion). */
  private reference(type: ts.ObjectType): JsonSchema {
    let name = this.definitionNames.get(type);
    if (name === undefined) {
      name = this.uniqueName(type.getSymbol()?.getName() ?? "Object");
      this.definitionNames.set(type, name);
      this.definitions[name] = {};
      const body = this.objectSchema(type);
      const description = documentation(type.getSymbol(), this.checker);
      this.definitions[name] = description ? { description, ...body } : body;
    }
    return { $ref: `#/definitions/${name}` };
  }

  private uniqueName(base: string): string {
    const clean = base.replace(/[^A-Za-z0-9_.$-]/g, "_") || "Object";
    let name = clean;
    for (let i = 1; name in this.definitions || name in MESSAGE_DEFINITIONS; i += 1) name = `${clean}_${i}`;
    return name;
  }

  private objectSchema(type: ts.Type): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const property of this.checker.getPropertiesOfType(type)) {
      if (property.flags & (SymbolFlags.Method | SymbolFlags.Prototype)) continue;
      const propertyType = this.checker.getTypeOfSymbol(property);
      const schema = this.convert(propertyType);
      if (schema === undefined) continue;
      const description = documentation(property, this.checker);
      const name = property.getName();
      properties[name] = description ? { ...schema, description } : schema;
      if (!(property.flags & SymbolFlags.Optional) && !includesUndefined(propertyType)) required.push(name);
    }
    const schema: JsonSchema = { type: "object" };
    if (Object.keys(properties).length > 0) schema.properties = properties;
    if (required.length > 0) schema.required = required.sort();
    const index = this.checker.getIndexInfoOfType(type, ts.IndexKind.String);
    if (index) schema.additionalProperties = this.convert(index.type) ?? {};
    return schema;
  }

  /** An intersection of objects is one object; primitives intersected with brands keep the primitive. */
  private intersectionSchema(type: ts.IntersectionType): JsonSchema | undefined {
    const primitive = type.types.find((member) => !(member.flags & TypeFlags.Object));
    if (primitive) return this.convert(primitive);
    return this.objectSchema(type);
  }

  /** Literals become one enum, primitive types one `type` list, anything else an `anyOf` entry. */
  private unionSchema(members: readonly ts.Type[]): JsonSchema | undefined {
    const values: Primitive[] = [];
    const simple: string[] = [];
    const others: JsonSchema[] = [];
    for (const member of members) {
      if (member.flags & (TypeFlags.Undefined | TypeFlags.Void | TypeFlags.Never) || isOverwriteValue(member)) continue;
      const literal = literalValue(member);
      if (literal !== undefined) {
        if (!values.includes(literal)) values.push(literal);
        continue;
      }
      const schema = this.convert(member);
      if (schema === undefined) continue;
      const keys = Object.keys(schema);
      if (keys.length === 1 && typeof schema.type === "string") {
        if (!simple.includes(schema.type)) simple.push(schema.type);
      } else {
        others.push(schema);
      }
    }
    if (values.includes(true) && values.includes(false)) {
      values.splice(0, values.length, ...values.filter((value) => typeof value !== "boolean"));
      if (!simple.includes("boolean")) simple.push("boolean");
    }
    const schemas: JsonSchema[] = [];
    if (values.length > 0) schemas.push(enumSchema(values));
    if (simple.length > 0) schemas.push({ type: simple.length === 1 ? simple[0] : simple });
    schemas.push(...others);
    if (schemas.length === 0) return undefined;
    return schemas.length === 1 ? schemas[0] : { anyOf: schemas };
  }

  private isMessage(type: ts.Type): boolean {
    if (!this.baseMessage || type.flags & (TypeFlags.Any | TypeFlags.Unknown | TypeFlags.Never)) return false;
    if (!(type.flags & TypeFlags.Object)) return false;
    return this.checker.isTypeAssignableTo(type, this.baseMessage);
  }

  /** An array (or a union with an array) whose elements may be messages: a messages channel or its update type. */
  private isMessageArray(type: ts.Type): boolean {
    if (!this.baseMessage) return false;
    const members = type.flags & TypeFlags.Union ? (type as ts.UnionType).types : [type];
    return members.some((member) => {
      if (!(member.flags & TypeFlags.Object) || !this.checker.isArrayType(member)) return false;
      const [element] = this.checker.getTypeArguments(member as ts.TypeReference);
      if (!element) return false;
      const elements = element.flags & TypeFlags.Union ? (element as ts.UnionType).types : [element];
      return elements.some((candidate) => this.isMessage(candidate));
    });
  }

  private messageRef(): JsonSchema {
    Object.assign(this.definitions, MESSAGE_DEFINITIONS);
    return { $ref: BASE_MESSAGE_REF };
  }

  private messageArray(): JsonSchema {
    return { type: "array", items: this.messageRef() };
  }
}

function literalValue(type: ts.Type): Primitive | undefined {
  if (type.flags & TypeFlags.StringLiteral) return (type as ts.StringLiteralType).value;
  if (type.flags & TypeFlags.NumberLiteral) return (type as ts.NumberLiteralType).value;
  if (type.flags & TypeFlags.BooleanLiteral) return (type as { intrinsicName?: string }).intrinsicName === "true";
  return undefined;
}

function enumSchema(values: Primitive[]): JsonSchema {
  const kinds = new Set(values.map((value) => typeof value));
  const type = kinds.size === 1 ? { type: [...kinds][0] } : {};
  if (values.length === 1) return { ...type, const: values[0] };
  return { ...type, enum: [...values].sort() };
}

function includesUndefined(type: ts.Type): boolean {
  if (type.flags & (TypeFlags.Undefined | TypeFlags.Void | TypeFlags.Any | TypeFlags.Unknown)) return true;
  return Boolean(type.flags & TypeFlags.Union) && (type as ts.UnionType).types.some(includesUndefined);
}

/** LangGraph's `{ __overwrite__: value }` escape hatch of reducers: not part of the documented input. */
function isOverwriteValue(type: ts.Type): boolean {
  const name = (type.aliasSymbol ?? type.getSymbol())?.getName();
  return name === "OverwriteValue" || name === "Overwrite";
}

function isNamedObject(type: ts.ObjectType): boolean {
  const target = type.objectFlags & ObjectFlags.Reference ? (type as ts.TypeReference).target : type;
  return Boolean(target.objectFlags & (ObjectFlags.Interface | ObjectFlags.Class)) && type.getSymbol() !== undefined;
}

function documentation(symbol: ts.Symbol | undefined, checker: ts.TypeChecker): string | undefined {
  if (!symbol) return undefined;
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
  return text || undefined;
}
