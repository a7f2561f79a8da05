/**
 * Answering an elicitation at a terminal (for `hermit call`): the message, then one question per
 * field of the requested form, control characters shown escaped (an upstream's elicitation could
 * otherwise rewrite what the terminal shows). Only used when stdin and stderr are a TTY.
 */
import process from "node:process";
import { createInterface } from "node:readline/promises";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { terminalSafe } from "../gates/terminal_text.ts";

export function ttyAvailable(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

export async function ttyElicit(params: ElicitRequest["params"]): Promise<ElicitResult> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write(`\n${terminalSafe(params.message)}\n`);
    const schema = (params as { requestedSchema?: { properties?: Record<string, Record<string, unknown>> } })
      .requestedSchema;
    const content: Record<string, string | number | boolean> = {};
    for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
      const label = terminalSafe(String(prop.title ?? key));
      if (prop.type === "boolean") {
        const a = (await rl.question(`${label}? [y/N] `)).trim().toLowerCase();
        content[key] = a === "y" || a === "yes";
      } else {
        const a = await rl.question(`${label}: `);
        content[key] = prop.type === "number" || prop.type === "integer" ? Number(a) : a;
      }
    }
    return { action: "accept", content };
  } catch {
    return { action: "cancel" };
  } finally {
    rl.close();
  }
}
