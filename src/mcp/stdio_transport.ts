/**
 * MCP over a child's stdin/stdout, with the child in its own process group (so it is watched
 * and stopped as a group: stdin close, SIGTERM, grace, SIGKILL). The SDK's own stdio transport
 * spawns without a group and cannot stop a stubborn server under Deno; this one can.
 * The child's stderr is handed to `onStderrLine` one line at a time, and the last lines are kept
 * for error messages.
 */
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type ProcessGroup, spawnInGroup } from "../process/group.ts";

export interface StdioSpawn {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** Starts the child some other way (the sandbox's launcher); resolves once it runs. */
export type Launch = (spawn: StdioSpawn, stdio: "pipe"[]) => Promise<ProcessGroup>;

const STDERR_KEEP = 20;

export class GroupStdioTransport implements Transport {
  readonly #spawn: StdioSpawn;
  readonly #read = new ReadBuffer();
  readonly #stderrTail: string[] = [];
  #stderrPartial = "";
  readonly #launch: Launch | undefined;
  #launching: Promise<ProcessGroup> | undefined;
  #group: ProcessGroup | undefined;
  #closed = false;

  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  onStderrLine?: (line: string) => void;

  constructor(spawn: StdioSpawn, launch?: Launch) {
    this.#spawn = spawn;
    this.#launch = launch;
  }

  get pid(): number | undefined {
    return this.#group?.pgid;
  }

  /** The last lines the server wrote to stderr. */
  get stderrTail(): string[] {
    return [...this.#stderrTail, ...(this.#stderrPartial ? [this.#stderrPartial] : [])];
  }

  async start(): Promise<void> {
    if (this.#group || this.#launching) throw new Error("transport already started");
    const { command, args, env, cwd } = this.#spawn;
    const stdio: "pipe"[] = ["pipe", "pipe", "pipe"];
    // a launcher (the sandbox) hands back a group that has already started
    this.#launching = this.#launch?.(this.#spawn, stdio);
    const group = this.#launching ? await this.#launching : spawnInGroup(command, args, { env, cwd, stdio });
    this.#group = group;
    const child = group.child;
    return new Promise<void>((resolve, reject) => {
      let started = this.#launching !== undefined;
      if (started) resolve();
      child.once("spawn", () => {
        started = true;
        resolve();
      });
      group.exited.then((status) => {
        if (!started) reject(new Error(status.reason));
        this.#finish();
      });
      child.stdin!.on("error", (err) => this.onerror?.(err));
      child.stdout!.on("data", (chunk: Buffer) => {
        try {
          this.#read.append(chunk);
        } catch (err) {
          this.onerror?.(err as Error);
          void this.close();
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.#read.readMessage();
          } catch (err) {
            this.onerror?.(new Error(`invalid JSON-RPC line from the server: ${(err as Error).message}`));
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (text: string) => this.#stderr(text));
    });
  }

  #stderr(text: string): void {
    const lines = (this.#stderrPartial + text).split(/\r?\n/);
    this.#stderrPartial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.trim()) continue;
      this.#stderrTail.push(line);
      if (this.#stderrTail.length > STDERR_KEEP) this.#stderrTail.shift();
      this.onStderrLine?.(line);
    }
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#read.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#group?.child.stdin;
    if (!stdin || this.#closed) return Promise.reject(new Error("transport is closed"));
    return new Promise((resolve, reject) => {
      const ok = stdin.write(serializeMessage(message), (err) => err ? reject(err) : undefined);
      if (ok) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Stop the server's whole process group (stdin first, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    const group = this.#group ?? await this.#launching?.catch(() => undefined);
    if (group) await group.stop({ stdinMs: 1000 });
    this.#finish();
  }
}
