/**
 * What a confined process may not read by default: the user's secrets. The list follows what
 * credential-stealing packages actually go for (the npm and PyPI stealers of 2022-2025, the
 * Shai-Hulud worm, the Nx "s1ngularity" payload that drove AI CLIs to hunt for keys): SSH and GPG
 * keys, cloud and cluster credentials, container-registry, git and package-registry tokens,
 * `.netrc`, CLI token files, password stores and keyrings, browser profiles (saved logins and
 * cookies), crypto wallets, messenger sessions, shell and REPL histories, the credentials of AI
 * coding CLIs and their user-level MCP configs (where people paste other servers' tokens into
 * `env:`), hermit's own state where it is without `HERMIT_HOME` (the user's usual OAuth logins;
 * also `$XDG_STATE_HOME/hermit`), and the state in use plus every adapter's `.serve/` (the
 * standalone service's bearer token), which the caller adds. Pure: home, environment and
 * platform in, absolute paths out (a trailing `*` matches names starting with what precedes it).
 */
import path from "node:path";
import { stateDir } from "../platform/paths.ts";

export interface Secret {
  path: string;
  /** What it holds, for the README and `--json`. */
  what: string;
}

/** Under the home directory, on every Unix-like platform. */
const HOME_SECRETS: [string, string][] = [
  [".ssh", "SSH keys"],
  [".gnupg", "GPG keys"],
  [".password-store", "pass password store"],
  [".aws", "AWS credentials and SSO cache"],
  [".azure", "Azure CLI tokens"],
  [".kube", "Kubernetes credentials"],
  [".docker/config.json", "container registry logins"],
  [".git-credentials", "git credential store"],
  [".netrc", "netrc logins"],
  [".Xauthority", "X11 login cookie (with it, the X server takes keystrokes)"],
  [".ICEauthority", "X session manager cookie"],
  ["_netrc", "netrc logins"],
  [".pgpass", "PostgreSQL passwords"],
  [".my.cnf", "MySQL passwords"],
  [".pypirc", "PyPI tokens"],
  [".gem/credentials", "RubyGems token"],
  [".cargo/credentials", "crates.io token"],
  [".cargo/credentials.toml", "crates.io token"],
  [".composer/auth.json", "Composer tokens"],
  [".m2/settings-security.xml", "Maven master password"],
  [".gradle/gradle.properties", "Gradle credentials"],
  [".nuget/NuGet/NuGet.Config", "NuGet credentials"],
  [".terraform.d/credentials.tfrc.json", "Terraform Cloud token"],
  [".terraformrc", "Terraform credentials"],
  [".vault-token", "Vault token"],
  [".pulumi/credentials.json", "Pulumi token"],
  [".fly", "Fly.io token"],
  [".oci", "Oracle Cloud keys"],
  [".s3cfg", "S3 keys"],
  [".boto", "Google/AWS boto keys"],
  [".wrangler", "Cloudflare token"],
  [".vercel", "Vercel token"],
  [".mozilla", "Firefox profiles"],
  [".thunderbird", "Thunderbird profiles"],
  [".electrum", "Electrum wallet"],
  [".bitcoin", "Bitcoin wallet"],
  [".ethereum/keystore", "Ethereum keys"],
  [".bash_history", "shell history"],
  [".zsh_history", "shell history"],
  [".zhistory", "shell history"],
  [".histfile", "shell history"],
  [".sh_history", "shell history"],
  [".python_history", "REPL history"],
  [".node_repl_history", "REPL history"],
  [".psql_history", "REPL history"],
  [".mysql_history", "REPL history"],
  [".sqlite_history", "REPL history"],
  [".rediscli_history", "REPL history"],
  [".claude/.credentials.json", "Claude Code login"],
  [".codex/auth.json", "Codex login"],
  [".gemini/oauth_creds.json", "Gemini CLI login"],
  [".claude.json", "Claude Code's MCP servers (their env: other servers' tokens)"],
  [".cursor/mcp.json", "Cursor's MCP servers"],
  [".gemini/settings.json", "Gemini CLI's MCP servers"],
  [".codex/config.toml", "Codex's MCP servers"],
  [".pi/agent/mcp.json", "Pi's MCP servers"],
  [".pi/agent/auth.json", "Pi login"],
  [".hermes/config.yaml", "Hermes's MCP servers"],
  [".hermes/.env", "Hermes API keys"],
  [".codeium/windsurf/mcp_config.json", "Windsurf's MCP servers"],
  [".kiro/settings/mcp.json", "Kiro's MCP servers"],
  [".lmstudio/mcp.json", "LM Studio's MCP servers"],
  [".copilot/mcp-config.json", "GitHub Copilot CLI's MCP servers"],
  [".qwen/settings.json", "Qwen Code's MCP servers"],
  [".continue/config.json", "Continue's models and MCP servers (API keys)"],
  [".continue/config.yaml", "Continue's models and MCP servers (API keys)"],
  [".aider.conf.yml", "Aider API keys"],
  [".cache/huggingface/token", "Hugging Face token"],
  [".cache/huggingface/stored_tokens", "Hugging Face tokens"],
  [".huggingface/token", "Hugging Face token"],
  [".kaggle/kaggle.json", "Kaggle API key"],
  [".databrickscfg", "Databricks tokens"],
  [".snowflake/connections.toml", "Snowflake connections"],
  [".sentryclirc", "Sentry token"],
  [".supabase/access-token", "Supabase token"],
  [".railway/config.json", "Railway token"],
  [".doppler", "Doppler token"],
  [".aliyun/config.json", "Alibaba Cloud keys"],
  [".bluemix/config.json", "IBM Cloud token"],
];

/** Under `$XDG_CONFIG_HOME` (default `~/.config`). */
const CONFIG_SECRETS: [string, string][] = [
  ["gh/hosts.yml", "GitHub CLI token"],
  ["hub", "hub token"],
  ["glab-cli", "GitLab CLI token"],
  ["gcloud", "Google Cloud credentials"],
  ["doctl", "DigitalOcean token"],
  ["netlify", "Netlify token"],
  [".wrangler", "Cloudflare token"],
  ["rclone/rclone.conf", "rclone remotes"],
  ["git/credentials", "git credential store"],
  ["composer/auth.json", "Composer tokens"],
  ["github-copilot", "GitHub Copilot tokens"],
  ["solana", "Solana keys"],
  ["Exodus", "Exodus wallet"],
  ["google-chrome", "Chrome profiles"],
  ["chromium", "Chromium profiles"],
  ["BraveSoftware", "Brave profiles"],
  ["microsoft-edge", "Edge profiles"],
  ["vivaldi", "Vivaldi profiles"],
  ["opera", "Opera profiles"],
  ["discord", "Discord session"],
  ["Slack", "Slack session"],
  ["Signal", "Signal messages and keys"],
  ["Bitwarden", "Bitwarden vault"],
  ["1Password", "1Password data"],
  ["op", "1Password CLI"],
  ["keepassxc", "KeePassXC settings"],
  ["opencode/opencode.json", "OpenCode's MCP servers"],
  ["opencode/opencode.jsonc", "OpenCode's MCP servers"],
  ["Code/User/mcp.json", "VS Code's MCP servers"],
  ["Claude/claude_desktop_config.json", "Claude Desktop's MCP servers"],
  ["Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", "Cline's MCP servers"],
  ["goose/config.yaml", "Goose's extensions (their env)"],
  ["zed/settings.json", "Zed's context servers"],
  ["stripe/config.toml", "Stripe keys"],
  ["ngrok/ngrok.yml", "ngrok authtoken"],
  ["configstore/firebase-tools.json", "Firebase login"],
  ["pypoetry/auth.toml", "Poetry credentials"],
  ["hcloud/cli.toml", "Hetzner Cloud token"],
  ["scw/config.yaml", "Scaleway keys"],
  ["openstack/clouds.yaml", "OpenStack credentials"],
  ["linode-cli", "Linode token"],
  ["containers/auth.json", "Podman registry logins"],
  ["helm/registry/config.json", "Helm registry logins"],
];

/** Under `$XDG_DATA_HOME` (default `~/.local/share`). */
const DATA_SECRETS: [string, string][] = [
  ["keyrings", "GNOME keyring"],
  ["kwalletd", "KDE wallet"],
  ["fish/fish_history", "shell history"],
  ["TelegramDesktop", "Telegram session"],
  ["com.vercel.cli", "Vercel token"],
  ["opencode/auth.json", "OpenCode logins"],
  ["uv/credentials", "uv registry credentials"],
];

/** macOS only, under `~/Library`. */
const MAC_SECRETS: [string, string][] = [
  ["Keychains", "keychains"],
  ["Cookies", "cookies"],
  ["Safari", "Safari data"],
  ["Mail", "mail"],
  ["Messages", "messages"],
  ["Application Support/Google/Chrome", "Chrome profiles"],
  ["Application Support/Firefox", "Firefox profiles"],
  ["Application Support/BraveSoftware", "Brave profiles"],
  ["Application Support/Microsoft Edge", "Edge profiles"],
  ["Application Support/discord", "Discord session"],
  ["Application Support/Slack", "Slack session"],
  ["Application Support/Signal", "Signal messages and keys"],
  ["Application Support/Exodus", "Exodus wallet"],
  ["Application Support/com.1password.1password", "1Password data"],
  ["Application Support/Code/User/mcp.json", "VS Code's MCP servers"],
  ["Application Support/Claude/claude_desktop_config.json", "Claude Desktop's MCP servers"],
];

/** Outside the home directory (readable only by root; hermit often runs as root in containers). */
const SYSTEM_SECRETS: [string, string][] = [
  ["/etc/shadow", "password hashes"],
  ["/etc/gshadow", "group password hashes"],
  ["/etc/ssh/ssh_host_*", "SSH host keys"],
  ["/etc/sudoers", "sudo rules"],
];

/** Variables that move a tool's directory; these files in the place they name are protected too. */
const ENV_DIR_SECRETS: [string, string, string][] = [
  ["CLAUDE_CONFIG_DIR", ".claude.json", "Claude Code's MCP servers"],
  ["CLAUDE_CONFIG_DIR", ".credentials.json", "Claude Code login"],
  ["CODEX_HOME", "config.toml", "Codex's MCP servers"],
  ["CODEX_HOME", "auth.json", "Codex login"],
  ["PI_CODING_AGENT_DIR", "mcp.json", "Pi's MCP servers"],
  ["PI_CODING_AGENT_DIR", "auth.json", "Pi login"],
  ["HERMES_HOME", "config.yaml", "Hermes's MCP servers"],
  ["HERMES_HOME", ".env", "Hermes API keys"],
  ["HF_HOME", "token", "Hugging Face token"],
  ["HF_HOME", "stored_tokens", "Hugging Face tokens"],
  ["KAGGLE_CONFIG_DIR", "kaggle.json", "Kaggle API key"],
  // where Podman, Buildah and Skopeo keep registry logins first (~/.config's is the fallback)
  ["XDG_RUNTIME_DIR", "containers/auth.json", "Podman registry logins"],
];

/** Variables that move a tool's credentials elsewhere; the place they name is protected too. */
const ENV_SECRETS: [string, string][] = [
  ["AWS_SHARED_CREDENTIALS_FILE", "AWS credentials"],
  ["AWS_CONFIG_FILE", "AWS configuration"],
  ["KUBECONFIG", "Kubernetes credentials"],
  ["DOCKER_CONFIG", "container registry logins"],
  ["REGISTRY_AUTH_FILE", "container registry logins (Podman, Buildah, Skopeo)"],
  ["GNUPGHOME", "GPG keys"],
  ["PASSWORD_STORE_DIR", "pass password store"],
  ["CLOUDSDK_CONFIG", "Google Cloud credentials"],
  ["AZURE_CONFIG_DIR", "Azure CLI tokens"],
  ["GH_CONFIG_DIR", "GitHub CLI token"],
  ["HISTFILE", "shell history"],
  ["XAUTHORITY", "X11 login cookie (with it, the X server takes keystrokes)"],
];

export function defaultSecrets(
  platform: NodeJS.Platform,
  home: string,
  env: Readonly<Record<string, string | undefined>>,
): Secret[] {
  const p = path.posix;
  const out: Secret[] = [];
  const add = (at: string, what: string) => out.push({ path: at, what });
  for (const [rel, what] of HOME_SECRETS) add(p.join(home, rel), what);
  const config = env.XDG_CONFIG_HOME && p.isAbsolute(env.XDG_CONFIG_HOME)
    ? env.XDG_CONFIG_HOME
    : p.join(home, ".config");
  const data = env.XDG_DATA_HOME && p.isAbsolute(env.XDG_DATA_HOME)
    ? env.XDG_DATA_HOME
    : p.join(home, ".local", "share");
  for (const [rel, what] of CONFIG_SECRETS) add(p.join(config, rel), what);
  for (const [rel, what] of DATA_SECRETS) add(p.join(data, rel), what);
  if (platform === "darwin") {
    for (const [rel, what] of MAC_SECRETS) add(p.join(home, "Library", rel), what);
  }
  for (const [at, what] of SYSTEM_SECRETS) add(at, what);
  for (const [key, what] of ENV_SECRETS) {
    const v = env[key];
    // KUBECONFIG may list several files
    for (const one of (v ?? "").split(":")) if (one && p.isAbsolute(one)) add(p.normalize(one), what);
  }
  for (const [key, file, what] of ENV_DIR_SECRETS) {
    const v = env[key];
    if (v && p.isAbsolute(v)) add(p.join(v, file), what);
  }
  // with HERMIT_HOME elsewhere, the usual state (the user's OAuth logins, service tokens) is still there
  for (const xdg of [undefined, env.XDG_STATE_HOME]) {
    const at = stateDir(platform, { XDG_STATE_HOME: xdg }, home);
    if (p.isAbsolute(at)) add(at, "hermit's state without HERMIT_HOME (OAuth logins, service tokens)");
  }
  return dedupe(out);
}

/** The list without a path twice (the first entry for it kept). */
export function dedupe(list: Secret[]): Secret[] {
  const seen = new Set<string>();
  return list.filter((s) => !seen.has(s.path) && (seen.add(s.path), true));
}

/** Expand a trailing `*` in the last segment against a directory listing. Pure. */
export function expandGlob(pattern: string, list: (dir: string) => string[] | undefined): string[] {
  if (!pattern.endsWith("*")) return [pattern];
  const dir = path.posix.dirname(pattern);
  const prefix = path.posix.basename(pattern).slice(0, -1);
  return (list(dir) ?? []).filter((n) => n.startsWith(prefix)).map((n) => path.posix.join(dir, n));
}
