import { FormatRegistry, Type, type TObject, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { isCleanText, isDate, normalizeTimestamp } from '../model/values.js';

/**
 * Request validation derived from the contract schemas (TypeBox). The schemas are what the
 * OpenAPI document publishes; this turns a failed check into the one error a client needs:
 * the FIRST offending field in the schema's property order, with a sentence naming it. Rules a
 * schema cannot state (a dataset in the catalog, a field equal to another) stay with the caller.
 */

// The formats the contract uses, checked as the service checks them (TypeBox knows none itself).
if (!FormatRegistry.Has('date')) FormatRegistry.Set('date', (v) => isDate(v));
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => normalizeTimestamp(v) !== null);

/**
 * What a value must be, in words, for a property that fails its schema; or the whole error
 * (field and sentence), used whether the property is absent or wrong.
 */
export type Expectation = string | ((value: unknown) => string) | FieldError;

const EXPECTATIONS = new WeakMap<TSchema, Expectation>();

/** Attaches the words of the error to a schema (kept out of the published JSON). */
export function mustBe<T extends TSchema>(schema: T, expectation: Expectation): T {
  EXPECTATIONS.set(schema, expectation);
  return schema;
}

/** `Type.Optional` (which copies the schema) keeping the words of its errors. */
export function optional<T extends TSchema>(schema: T) {
  const out = Type.Optional(schema);
  const e = EXPECTATIONS.get(schema);
  if (e) EXPECTATIONS.set(out, e);
  return out;
}

const CHECKS = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The compiled checker of a schema, compiled once. */
export function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = CHECKS.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    CHECKS.set(schema, c);
  }
  return c;
}

function defaultExpectation(schema: TSchema): string {
  const s = schema as Record<string, unknown>;
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.anyOf) && s.anyOf.every((x: Record<string, unknown>) => 'const' in x)) {
    return (s.anyOf as { const: unknown }[]).map((x) => JSON.stringify(x.const)).join(' or ');
  }
  if (s.type === 'integer') {
    const min = typeof s.minimum === 'number' ? s.minimum : null;
    return min === 0 ? 'a non-negative integer' : 'an integer';
  }
  return typeof s.type === 'string' ? `a valid ${s.type}` : 'valid';
}

export interface FieldError {
  /** The property's path, e.g. `meta.batch_id`. */
  field: string;
  message: string;
}

export interface CheckOptions {
  /** Prefix of field names in messages (`meta.`). */
  prefix?: string;
  /**
   * Rules a schema cannot state, per property, run right after that property passes its
   * schema (so errors keep the property order): the message, or null when the value is fine.
   */
  refine?: Record<string, (value: unknown, whole: Record<string, unknown>) => string | null>;
}

/**
 * The first error of `value` against an object schema, in property order; null when it
 * conforms. `undefined` (and `null` for a required property) is "is required".
 */
export function firstError(schema: TObject, value: unknown, opts: CheckOptions = {}): FieldError | null {
  const prefix = opts.prefix ?? '';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const name = prefix.replace(/\.$/, '') || 'body';
    return { field: name, message: `${name} must be a JSON object` };
  }
  const obj = value as Record<string, unknown>;
  const props = schema.properties as Record<string, TSchema>;
  const names = Object.keys(props);
  if (schema.additionalProperties === false) {
    const unknown = Object.keys(obj).filter((k) => !Object.hasOwn(props, k));
    if (unknown.length > 0) {
      return {
        field: `${prefix}${unknown[0] ?? ''}`,
        message: `unknown field(s) ${unknown.join(', ')}; allowed: ${names.join(', ')}`,
      };
    }
  }
  const required = new Set(schema.required ?? []);
  for (const name of names) {
    const v = obj[name];
    const field = `${prefix}${name}`;
    const s = props[name] as TSchema;
    const e = EXPECTATIONS.get(s) ?? defaultExpectation(s);
    if (v === undefined || (v === null && required.has(name))) {
      if (!required.has(name)) continue;
      return typeof e === 'object' ? e : { field, message: `${field} is required` };
    }
    if (!checker(s).Check(v)) {
      if (typeof e === 'object') return e;
      return { field, message: `${field} must be ${typeof e === 'function' ? e(v) : e}` };
    }
    const refined = opts.refine?.[name]?.(v, obj);
    if (refined) return { field, message: refined };
    // Text no database stores as given: a NUL (PostgreSQL refuses it) or an unpaired surrogate
    // (both drivers would store U+FFFD, so what is kept differs from what was answered).
    if (typeof v === 'string' && !isCleanText(v))
      return { field, message: `${field} must be text without NUL or unpaired surrogates` };
  }
  return null;
}
