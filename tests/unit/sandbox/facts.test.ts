/**
 * The small pure pieces around the sandbox: the default secrets (and the variables that move
 * them), glob expansion, when user namespaces are off, and the record of served adapters.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { usernsBlocked } from "../../../src/sandbox/facts.ts";
import { defaultSecrets, expandGlob } from "../../../src/sandbox/secrets.ts";
import { parseServed, recordServed, servedFile } from "../../../src/sandbox/served.ts";
import { tempDir } from "../../helpers/tmp.ts";

describe("default secrets", () => {
  const linux = defaultSecrets("linux", "/home/u", {}).map((s) => s.path);

  it("follow XAUTHORITY to the X11 cookie wherever it is", () => {
    const at = defaultSecrets("linux", "/home/u", { XAUTHORITY: "/run/user/1000/xauth_AbC" }).map((s) =>
      s.path
    );
    assert.ok(at.includes("/run/user/1000/xauth_AbC"));
  });

  it("cover what credential stealers go for", () => {
    for (
      const p of [
        "/home/u/.ssh",
        "/home/u/.gnupg",
        "/home/u/.aws",
        "/home/u/.azure",
        "/home/u/.config/gcloud",
        "/home/u/.kube",
        "/home/u/.docker/config.json",
        "/home/u/.git-credentials",
        "/home/u/.netrc",
        "/home/u/.config/gh/hosts.yml",
        "/home/u/.password-store",
        "/home/u/.mozilla",
        "/home/u/.config/google-chrome",
        "/home/u/.bash_history",
        "/home/u/.zsh_history",
        "/home/u/.local/share/keyrings",
        "/home/u/.Xauthority",
        "/home/u/.ICEauthority",
        "/etc/shadow",
        "/etc/ssh/ssh_host_*",
      ]
    ) assert.ok(linux.includes(p), p);
    assert.ok(
      !linux.includes("/home/u/.npmrc"),
      "npm's config stays readable (registry settings live there)",
    );
    assert.ok(!linux.some((p) => p.includes("Library")), "no macOS paths on Linux");
  });

  it("cover the AI and developer-platform tokens stealers now look for, and more agents' MCP configs", () => {
    for (
      const p of [
        "/home/u/.cache/huggingface/token",
        "/home/u/.cache/huggingface/stored_tokens",
        "/home/u/.huggingface/token",
        "/home/u/.kaggle/kaggle.json",
        "/home/u/.databrickscfg",
        "/home/u/.snowflake/connections.toml",
        "/home/u/.sentryclirc",
        "/home/u/.supabase/access-token",
        "/home/u/.railway/config.json",
        "/home/u/.doppler",
        "/home/u/.aliyun/config.json",
        "/home/u/.bluemix/config.json",
        "/home/u/.config/stripe/config.toml",
        "/home/u/.config/ngrok/ngrok.yml",
        "/home/u/.config/configstore/firebase-tools.json",
        "/home/u/.config/pypoetry/auth.toml",
        "/home/u/.config/hcloud/cli.toml",
        "/home/u/.config/scw/config.yaml",
        "/home/u/.config/openstack/clouds.yaml",
        "/home/u/.config/linode-cli",
        "/home/u/.config/containers/auth.json",
        "/home/u/.config/helm/registry/config.json",
        "/home/u/.aider.conf.yml",
        "/home/u/.continue/config.json",
        "/home/u/.continue/config.yaml",
        "/home/u/.codeium/windsurf/mcp_config.json",
        "/home/u/.kiro/settings/mcp.json",
        "/home/u/.lmstudio/mcp.json",
        "/home/u/.copilot/mcp-config.json",
        "/home/u/.qwen/settings.json",
        "/home/u/.config/goose/config.yaml",
        "/home/u/.config/zed/settings.json",
        "/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
      ]
    ) assert.ok(linux.includes(p), p);
    const moved = defaultSecrets("linux", "/home/u", { HF_HOME: "/hf", KAGGLE_CONFIG_DIR: "/kg" }).map((x) =>
      x.path
    );
    for (const p of ["/hf/token", "/hf/stored_tokens", "/kg/kaggle.json"]) assert.ok(moved.includes(p), p);
  });

  it("cover Podman's registry logins where Podman keeps them first: the runtime directory, REGISTRY_AUTH_FILE", () => {
    const at = defaultSecrets("linux", "/home/u", {
      XDG_RUNTIME_DIR: "/run/user/1000",
      REGISTRY_AUTH_FILE: "/srv/auth.json",
    }).map((x) => x.path);
    for (
      const p of [
        "/run/user/1000/containers/auth.json",
        "/srv/auth.json",
        "/home/u/.config/containers/auth.json",
      ]
    ) {
      assert.ok(at.includes(p), p);
    }
  });

  it("cover the agent hosts' MCP configs, where other servers' tokens are written (env: GITHUB_TOKEN …)", () => {
    for (
      const p of [
        "/home/u/.claude.json",
        "/home/u/.cursor/mcp.json",
        "/home/u/.gemini/settings.json",
        "/home/u/.codex/config.toml",
        "/home/u/.pi/agent/mcp.json",
        "/home/u/.hermes/config.yaml",
        "/home/u/.hermes/.env",
        "/home/u/.config/opencode/opencode.json",
        "/home/u/.local/share/opencode/auth.json",
        "/home/u/.config/Code/User/mcp.json",
        "/home/u/.config/Claude/claude_desktop_config.json",
      ]
    ) assert.ok(linux.includes(p), p);
    const moved = defaultSecrets("linux", "/home/u", {
      CLAUDE_CONFIG_DIR: "/c",
      CODEX_HOME: "/x",
      PI_CODING_AGENT_DIR: "/pi",
      HERMES_HOME: "/h",
    }).map((x) => x.path);
    for (const p of ["/c/.claude.json", "/x/config.toml", "/pi/mcp.json", "/h/config.yaml", "/h/.env"]) {
      assert.ok(moved.includes(p), p);
    }
    const mac = defaultSecrets("darwin", "/Users/a", {}).map((x) => x.path);
    assert.ok(mac.includes("/Users/a/Library/Application Support/Code/User/mcp.json"));
    assert.ok(mac.includes("/Users/a/Library/Application Support/Claude/claude_desktop_config.json"));
  });

  it("follow XDG locations and the variables that move credentials", () => {
    const s = defaultSecrets("linux", "/home/u", {
      XDG_CONFIG_HOME: "/cfg",
      KUBECONFIG: "/k/a:/k/b",
      AWS_SHARED_CREDENTIALS_FILE: "/secrets/aws",
      GNUPGHOME: "relative/ignored",
    }).map((x) => x.path);
    for (const p of ["/cfg/gh/hosts.yml", "/cfg/gcloud", "/k/a", "/k/b", "/secrets/aws"]) {
      assert.ok(s.includes(p), p);
    }
    assert.ok(!s.includes("relative/ignored"));
  });

  it("cover hermit's usual state when HERMIT_HOME points elsewhere (the user's OAuth logins)", () => {
    const s = defaultSecrets("linux", "/home/u", { HERMIT_HOME: "/srv/h", XDG_STATE_HOME: "/st" }).map((x) =>
      x.path
    );
    assert.ok(s.includes("/home/u/.local/state/hermit"));
    assert.ok(s.includes("/st/hermit"), "where XDG_STATE_HOME puts it");
    const plain = defaultSecrets("linux", "/home/u", { XDG_STATE_HOME: "relative" }).map((x) => x.path);
    assert.ok(plain.includes("/home/u/.local/state/hermit"));
    assert.ok(!plain.some((x) => x.startsWith("relative")));
    const mac = defaultSecrets("darwin", "/Users/a", { HERMIT_HOME: "/srv/h" }).map((x) => x.path);
    assert.ok(mac.includes("/Users/a/Library/Application Support/hermit"));
  });

  it("macOS adds the Library's keychains, cookies and browser profiles", () => {
    const mac = defaultSecrets("darwin", "/Users/a", {}).map((s) => s.path);
    assert.ok(mac.includes("/Users/a/Library/Keychains"));
    assert.ok(mac.includes("/Users/a/Library/Application Support/Google/Chrome"));
  });

  it("a trailing * matches names by prefix", () => {
    const list = (d: string) =>
      d === "/etc/ssh" ? ["ssh_config", "ssh_host_ed25519_key", "ssh_host_rsa_key.pub"] : undefined;
    assert.deepEqual(expandGlob("/etc/ssh/ssh_host_*", list), [
      "/etc/ssh/ssh_host_ed25519_key",
      "/etc/ssh/ssh_host_rsa_key.pub",
    ]);
    assert.deepEqual(expandGlob("/etc/x", list), ["/etc/x"]);
    assert.deepEqual(expandGlob("/none/a*", list), []);
  });
});

describe("user namespaces", () => {
  const sysctl = (values: Record<string, string>) => (n: string) => values[n];
  it("are off when a sysctl says so (AppArmor's restriction spares root)", () => {
    assert.equal(usernsBlocked(sysctl({}), false), undefined);
    assert.match(usernsBlocked(sysctl({ "user/max_user_namespaces": "0" }), true)!, /max_user_namespaces/);
    assert.match(usernsBlocked(sysctl({ "kernel/unprivileged_userns_clone": "0" }), false)!, /unprivileged/);
    assert.match(
      usernsBlocked(sysctl({ "kernel/apparmor_restrict_unprivileged_userns": "1" }), false)!,
      /AppArmor/,
    );
    assert.equal(
      usernsBlocked(sysctl({ "kernel/apparmor_restrict_unprivileged_userns": "1" }), true),
      undefined,
    );
  });
});

describe("served adapters", () => {
  it("are recorded once each, and gone directories are not protected", () => {
    const tmp = tempDir();
    try {
      const state = path.join(tmp.path, "state");
      const a = path.join(tmp.path, "a");
      mkdirSync(a);
      assert.deepEqual(recordServed(state, a), [a]);
      assert.deepEqual(recordServed(state, a), [a]);
      writeFileSync(
        servedFile(state),
        readFileSync(servedFile(state), "utf8") + "/gone/adapter\nnot-absolute\n",
      );
      const b = path.join(tmp.path, "b");
      mkdirSync(b);
      assert.deepEqual(recordServed(state, b), [a, b]);
      assert.deepEqual(parseServed(readFileSync(servedFile(state), "utf8")), [a, "/gone/adapter", b]);
    } finally {
      tmp.cleanup();
    }
  });
});
