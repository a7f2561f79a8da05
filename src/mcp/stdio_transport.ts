/**
 * MCP over a child's stdin/stdout, with the child in its own process group (so it is watched
 * and stopped as a group: stdin close, SIGTERM, grace, SIGKILL). The SDK's own stdio transport
 * spawns without a group and cannot stop a stubborn server under Deno; this one can.
 * What the server writes is read with bounds: a message larger than `MAX_UPSTREAM_MESSAGE_BYTES`
 * becomes an error answer to the one request it answered (the connection lives on), a line that
 * is not JSON-RPC is logged and dropped, and stderr is handed to `onStderrLine` one line at a
 * time, each cut at `MAX_STDERR_LINE` characters however long the server makes it (the last lines
 * are kept for error messages).
 */
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { describeBytes, MiB } from "../platform/read_capped.ts";
import { type ProcessGroup, spawnInGroup } from "../process/group.ts";
import { JsonLineReader, type LineEvent } from "./json_lines.ts";

/**
 * The largest message read from an upstream (results are capped at 2,000,000 characters and
 * binaries at 50 MiB afterwards, by gate 4); a larger one is an error for its request.
 */
export const MAX_UPSTREAM_MESSAGE_BYTES = 64 * MiB;
/** A stderr line longer than this is cut (the rest counted, not kept), as the command tools' tail is. */
export const MAX_STDERR_LINE = 4000;

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
  readonly #read = new JsonLineReader(MAX_UPSTREAM_MESSAGE_BYTES);
  readonly #stderrTail: string[] = [];
  /** The stderr line being written: at most MAX_STDERR_LINE characters kept, the rest counted. */
  #stderrPartial = "";
  #stderrDropped = 0;
  /** Ids of hermit's requests to the server still unanswered: an oversize line with one is their answer. */
  readonly #asked = new Set<RequestId>();
  readonly #launch: Launch | undefined;
  #launching: Promise<ProcessGroup> | undefined;
  #group: ProcessGroup | undefined;
  #closed = false;

  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  onStderrLine?: (line: string) => void;
  /** What the server wrote that hermit could not take (a bad line, an oversize message), for the log. */
  onProblem?: (text: string) => void;

  constructor(spawn: StdioSpawn, launch?: Launch) {
    this.#spawn = spawn;
    this.#launch = launch;
  }

  get pid(): number | undefined {
    return this.#group?.pgid;
  }

  /** The last lines the server wrote to stderr. */
  get stderrTail(): string[] {
    return [...this.#stderrTail, ...(this.#stderrPartial ? [this.#cutLine()] : [])];
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
        for (const event of this.#read.push(chunk)) this.#received(event);
      });
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (text: string) => this.#stderr(text));
    });
  }

  #received(e: LineEvent): void {
    if (e.kind === "message") {
      if (!("method" in e.message) && e.message.id !== undefined) this.#asked.delete(e.message.id);
      return this.onmessage?.(e.message);
    }
    if (e.kind !== "oversize") return this.#problem(`invalid JSON-RPC line from the server: ${e.detail}`);
    const what = `a message of ${describeBytes(e.bytes)}, over hermit's limit of ${
      describeBytes(MAX_UPSTREAM_MESSAGE_BYTES)
    }`;
    this.#problem(`the server sent ${what}; dropped`);
    if (e.id === null) return;
    if (e.method === undefined && this.#asked.delete(e.id)) {
      // the answer to one of hermit's requests: that request fails, the connection lives on
      this.onmessage?.({
        jsonrpc: "2.0",
        id: e.id,
        error: { code: ErrorCode.InternalError, message: `the server answered with ${what}` },
      });
    } else {
      void this.send({
        jsonrpc: "2.0",
        id: e.id,
        error: { code: ErrorCode.InvalidRequest, message: `hermit cannot read ${what}` },
      }).catch(() => {});
    }
  }

  #problem(text: string): void {
    if (this.onProblem) this.onProblem(text);
    else this.onerror?.(new Error(text));
  }

  /** Stderr in lines, without re-joining what was already seen: linear in what the server writes. */
  #stderr(text: string): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      this.#stderrAppend(text.slice(start, nl < 0 ? text.length : nl));
      if (nl < 0) return;
      const line = this.#cutLine().replace(/\r$/, "");
      this.#stderrPartial = "";
      this.#stderrDropped = 0;
      start = nl + 1;
      if (!line.trim()) continue;
      this.#stderrTail.push(line);
      if (this.#stderrTail.length > STDERR_KEEP) this.#stderrTail.shift();
      this.onStderrLine?.(line);
    }
  }

  #stderrAppend(part: string): void {
    const room = MAX_STDERR_LINE - this.#stderrPartial.length;
    if (part.length <= room) this.#stderrPartial += part;
    else {
      this.#stderrPartial += part.slice(0, Math.max(0, room));
      this.#stderrDropped += part.length - Math.max(0, room);
    }
  }

  #cutLine(): string {
    return this.#stderrDropped
      ? `${this.#stderrPartial} […${this.#stderrDropped} more characters]`
      : this.#stderrPartial;
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#read.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if ("method" in message && "id" in message) this.#asked.add(message.id);
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
