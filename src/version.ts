/**
 * The version of hermit, read from deno.json at build time (the bundler inlines the JSON), so the
 * binary, `deno run` and `bun` all report the same number.
 */
import meta from "../deno.json" with { type: "json" };

export const VERSION: string = meta.version;
