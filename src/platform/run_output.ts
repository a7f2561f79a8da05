/**
 * Run a command to its end and keep what it wrote on stdout; its stderr is ours, stdin is empty.
 * Under Bun (and in the compiled binary) through `Bun.spawn`, which costs a process that watches
 * its memory (a relay) a fraction of what Node's child_process does; elsewhere through
 * child_process.
 */
import process from "node:process";

export interface RunOutput {
  /** The exit code; -1 when it ended by a signal or could not be started. */
  code: number;
  stdout: string;
}

interface BunSpawn {
  spawn(
    argv: string[],
    opts: {
      stdin: "ignore";
      stdout: "pipe";
      stderr: "inherit";
      env: Record<string, string | undefined>;
      cwd?: string;
    },
  ): { stdout: ReadableStream<Uint8Array>; exited: Promise<number> };
}
const bun = (globalThis as unknown as { Bun?: BunSpawn }).Bun;

export async function runForOutput(
  argv: string[],
  opts: { env?: Record<string, string | undefined>; cwd?: string } = {},
): Promise<RunOutput> {
  const env = opts.env ?? process.env;
  if (bun) {
    try {
      const child = bun.spawn(argv, {
        stdin: "ignore",
        stdout: "pipe",
        stderr: "inherit",
        env,
        cwd: opts.cwd,
      });
      const stdout = await new Response(child.stdout).text();
      const code = await child.exited;
      return { code: code ?? -1, stdout };
    } catch {
      return { code: -1, stdout: "" };
    }
  }
  const { spawn } = await import("node:child_process");
  return await new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ["ignore", "pipe", "inherit"],
      cwd: opts.cwd,
      env: Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<
        string,
        string
      >,
    });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.once("error", () => resolve({ code: -1, stdout }));
    child.once("close", (code) => resolve({ code: code ?? -1, stdout }));
  });
}
