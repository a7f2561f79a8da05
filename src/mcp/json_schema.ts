/**
 * The one JSON Schema validator hermit compiles tool schemas with (the MCP SDK's setup: formats
 * on, unknown keywords tolerated): argument checking (`arguments.ts`) and `check` use it. Made at
 * the first schema compiled, not when a module loads: a session pays for it at its first call.
 */
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS: its default export is the plugin, or holds it as `default`
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  a: Ajv,
) => void;

function newAjv(): Ajv {
  // logger off: ajv's own warnings (an unknown format, ignored) must not reach stderr as raw lines
  const a = new Ajv({
    strict: false,
    allErrors: true,
    validateFormats: true,
    validateSchema: false,
    logger: false,
  });
  addFormats(a);
  return a;
}

/** The validator, made when the first schema is compiled (not when a module is loaded). */
let shared: Ajv | undefined;
const compiled = new WeakMap<object, ValidateFunction | { unusable: string }>();

/**
 * `schema` compiled (once per object), or why it cannot be. A schema with an `$id` gets a validator
 * of its own: ajv keeps ids, and the same manifest loaded twice would clash with itself.
 */
export function compileSchema(schema: object): ValidateFunction | { unusable: string } {
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      const ajv = JSON.stringify(schema).includes('"$id"') ? newAjv() : (shared ??= newAjv());
      validate = ajv.compile(schema);
    } catch (err) {
      validate = { unusable: `not a usable JSON Schema: ${(err as Error).message}` };
    }
    compiled.set(schema, validate);
  }
  return validate;
}
