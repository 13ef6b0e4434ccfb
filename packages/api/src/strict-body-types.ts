import type { AnyRouter } from "@trpc/server";
import type { z } from "zod";

type Schema = z.core.$ZodType;
type Def = z.core.$ZodTypeDef & Record<string, unknown>;

const COERCIBLE = new Set(["number", "boolean", "bigint", "date"]);
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "nonoptional", "catch"]);

const defOf = (schema: Schema): Def => schema._zod.def as Def;

/** The schema under optional/nullable/default/... and array wrappers: the same walk trpc-to-openapi does. */
function unwrap(schema: Schema): Schema {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    if (WRAPPERS.has(def.type)) current = def.innerType as Schema;
    else if (def.type === "array") current = def.element as Schema;
    else if (def.type === "lazy") current = (def.getter as () => Schema)();
    else return current;
  }
}

/** Makes `def.coerce` permanently false: the adapter's later `coerce = true` assignment becomes a no-op. */
function lockCoercion(def: Def): void {
  if (Object.getOwnPropertyDescriptor(def, "coerce")?.get) return; // already locked by an earlier app instance
  Object.defineProperty(def, "coerce", { get: () => false, set: () => undefined, enumerable: true, configurable: false });
}

function lockObject(schema: Schema, seen: Set<Schema>): void {
  const object = unwrap(schema);
  const def = defOf(object);
  if (def.type !== "object" || seen.has(object)) return;
  seen.add(object);
  for (const field of Object.values(def.shape as Record<string, Schema>)) {
    const inner = unwrap(field);
    const innerDef = defOf(inner);
    // an explicit z.coerce.* field asked for coercion; a pipe is already left alone by the adapter
    if (COERCIBLE.has(innerDef.type) && innerDef.coerce !== true) lockCoercion(innerDef);
    else if (innerDef.type === "object") lockObject(inner, seen);
  }
}

interface ProcedureDef {
  inputs?: unknown[];
  meta?: { openapi?: { method?: string } };
}

/**
 * trpc-to-openapi sets `coerce = true` on every number/boolean/bigint/date field of a procedure's input object
 * (mcampa/trpc-to-openapi `coerceSchema`), also for JSON bodies: `{"amount": "10"}` or `true` would be accepted as
 * numbers, against CONTRACT 7b ("wrong types get 400"). Query strings need that coercion, JSON bodies do not, so
 * the input schemas of every body-taking REST procedure (POST, PUT, PATCH) are locked against it here, once,
 * before the adapter first runs. Fields that opt in with `z.coerce.*` keep coercing.
 */
export function lockBodyCoercion(router: AnyRouter): void {
  const seen = new Set<Schema>();
  for (const procedure of Object.values(router._def.procedures as Record<string, { _def: ProcedureDef }>)) {
    const method = procedure._def.meta?.openapi?.method;
    if (method === undefined || method === "GET" || method === "DELETE") continue;
    for (const input of procedure._def.inputs ?? []) lockObject(input as Schema, seen);
  }
}
