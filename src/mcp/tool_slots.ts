/**
 * The bound on command-tool processes running at once (`serve.max_tool_processes`), for every
 * session of a gateway together. Past it a call is answered at once with an error naming the
 * bound: nothing queues, nothing is spawned, nothing hangs.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export class ToolSlots {
  #running = 0;

  constructor(readonly max: number) {}

  get running(): number {
    return this.#running;
  }

  async run(name: string, call: () => Promise<CallToolResult>): Promise<CallToolResult> {
    if (this.#running >= this.max) {
      return {
        isError: true,
        content: [{
          type: "text",
          text:
            `hermit: ${name} was not started: ${this.max} command tools are already running (serve.max_tool_processes); try again when one has finished`,
        }],
      };
    }
    this.#running++;
    try {
      return await call();
    } finally {
      this.#running--;
    }
  }
}
