// The status page (daemon, jobs, kernels, MCP, LSP) and the usage page (bar charts in SVG).

import { useEffect, useState } from "preact/hooks";
import type {
  DaemonStatusResponse,
  JobListResponse,
  KernelListResponse,
  LspListResponse,
  McpListResponse,
  UsageStatsResponse,
} from "../../typescript/src/generated/protocol";
import { app } from "./app";
import { formatTokens, plural, tokenCount } from "./format";
import { useEmitter } from "./store";

interface StatusData {
  daemon?: DaemonStatusResponse;
  jobs?: JobListResponse;
  kernels?: KernelListResponse;
  mcp?: McpListResponse;
  lsp?: LspListResponse;
  errors: string[];
}

function time(ms?: number | null): string {
  return ms ? new Date(ms).toLocaleString() : "";
}

function bytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(1)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

export function StatusPage() {
  const version = useEmitter(app.statusChanged);
  const [data, setData] = useState<StatusData>({ errors: [] });
  const [logs, setLogs] = useState<{ name: string; text: string; section: "jobs" | "mcp" | "lsp" }>();

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout>;
    const load = async () => {
      const client = app.client;
      if (client) {
        const errors: string[] = [];
        const get = <T,>(p: Promise<T>) =>
          p.catch((e: unknown) => {
            errors.push(e instanceof Error ? e.message : String(e));
            return undefined;
          });
        const [daemon, jobs, kernels, mcp, lsp] = await Promise.all([
          get(client.call("daemon/status", {})),
          get(client.call("job/list", {})),
          get(client.call("kernel/list", {})),
          get(client.call("mcp/list", {})),
          get(client.call("lsp/list", {})),
        ]);
        if (!stop) setData({ daemon, jobs, kernels, mcp, lsp, errors });
      }
      if (!stop) timer = setTimeout(load, 3000);
    };
    void load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [version, app.client]);

  const showLogs = async (name: string) => {
    const client = app.client;
    if (!client) return;
    const result = await app.call(() => client.call("mcp/logs", { name, lines: 200 }));
    if (result)
      setLogs({ name, section: "mcp", text: result.logs.map((log) => `# ${log.path}\n${log.text}`).join("\n\n") || "(empty)" });
  };
  const showLspLogs = async (name: string, root: string) => {
    const client = app.client;
    if (!client) return;
    const result = await app.call(() => client.call("lsp/logs", { name, root, lines: 200 }));
    if (result)
      setLogs({
        name: `${name} (${root})`,
        section: "lsp",
        text: result.logs.map((log) => `# ${log.path}\n${log.text}`).join("\n\n") || "(empty)",
      });
  };
  // The end of a job's output (its artifact), at most the last 64 KB.
  const showJobOutput = async (job: { id: string; sessionId: string; outputBytes: number }) => {
    const client = app.client;
    if (!client) return;
    const offset = Math.max(0, job.outputBytes - 65536);
    const result = await app.call(() =>
      client.call("artifact/read", { sessionId: job.sessionId, artifactId: job.id, offset, limit: 65536 }),
    );
    if (result)
      setLogs({
        name: `job ${job.id}${offset > 0 ? " (the last 64 KB)" : ""}`,
        section: "jobs",
        text: result.data || "(no output yet)",
      });
  };
  const logsPanel = (section: "jobs" | "mcp" | "lsp") =>
    logs?.section === section && (
      <div class="logs" data-testid="logs">
        <div class="logs-head">
          <strong>{logs.name}</strong>
          <button class="link small" onClick={() => setLogs(undefined)}>close</button>
        </div>
        <pre>{logs.text}</pre>
      </div>
    );

  const d = data.daemon;
  return (
    <div class="page" data-testid="status">
      <h1>Daemon</h1>
      {data.errors.map((e) => (
        <div key={e} class="error">
          {e}
        </div>
      ))}
      {d && (
        <table class="kv">
          <tbody>
            <tr><th>version</th><td>{d.version} (protocol {d.protocolVersion})</td></tr>
            <tr><th>pid</th><td>{d.pid} · {d.supervisor}</td></tr>
            <tr><th>started</th><td>{time(d.startedAt)} · up {Math.round(d.uptimeMs / 60000)} min</td></tr>
            <tr><th>connections</th><td>{d.connections}</td></tr>
            <tr><th>sessions</th><td>{d.sessions.loaded} loaded / {d.sessions.stored} stored</td></tr>
            {d.memory && <tr><th>memory</th><td>{bytes(d.memory.rssBytes)} RSS (peak {bytes(d.memory.peakRssBytes)})</td></tr>}
            <tr><th>database</th><td class="mono">{d.databasePath}</td></tr>
            {d.pools && <tr><th>pools</th><td>jobs {d.pools.jobsRunning}/{d.pools.jobsLimit} · kernels {d.pools.kernels}/{d.pools.kernelsLimit}</td></tr>}
            {d.config && <tr><th>config</th><td>{plural(d.config.reloads, "reload")}{d.config.diagnostics.length ? ` · ${plural(d.config.diagnostics.length, "diagnostic")}` : ""}</td></tr>}
          </tbody>
        </table>
      )}
      {d?.config && d.config.diagnostics.length > 0 && (
        <ul class="diagnostics">
          {d.config.diagnostics.map((diag, i) => (
            <li key={i} class="warning">
              <span class="mono">{diag.path}</span>: {diag.message}
            </li>
          ))}
        </ul>
      )}

      <section data-testid="status-jobs">
        <h2>Jobs</h2>
        <Table
          head={["id", "state", "command", "session", "started", "output", ""]}
          rows={(data.jobs?.jobs ?? []).map((job) => [
            job.id,
            `${job.state}${job.exitCode != null ? ` (${job.exitCode})` : ""}`,
            job.command,
            <a href={`#/s/${encodeURIComponent(job.sessionId)}`}>{job.sessionId.slice(0, 8)}</a>,
            time(job.startedAt),
            bytes(job.outputBytes),
            <button class="link small" data-testid="job-output" onClick={() => void showJobOutput(job)}>
              output
            </button>,
          ])}
        />
        {logsPanel("jobs")}
      </section>

      <section data-testid="status-kernels">
        <h2>Python kernels {data.kernels ? `(limit ${data.kernels.limit})` : ""}</h2>
        <Table
          head={["session", "state", "interpreter", "executions", "last used"]}
          rows={(data.kernels?.kernels ?? []).map((k) => [
            <a href={`#/s/${encodeURIComponent(k.sessionId)}`}>{k.sessionId.slice(0, 8)}</a>,
            k.state,
            k.interpreter,
            String(k.executions),
            time(k.lastUsedAt),
          ])}
        />
      </section>

      <section data-testid="status-mcp">
        <h2>MCP servers</h2>
        <Table
          head={["name", "state", "transport", "tools", "sessions", "error", ""]}
          rows={(data.mcp?.servers ?? []).map((s) => [
            s.name,
            s.state,
            s.transport,
            String(s.tools.length),
            String(s.sessions.length),
            s.lastError ?? "",
            <button class="link small" data-testid="mcp-logs" onClick={() => void showLogs(s.name)}>
              logs
            </button>,
          ])}
        />
        {logsPanel("mcp")}
      </section>

      <section data-testid="status-lsp">
        <h2>Language servers</h2>
        <Table
          head={["name", "state", "root", "files", "sessions", "error", ""]}
          rows={(data.lsp?.servers ?? []).map((s) => [
            s.name,
            s.state,
            s.root,
            String(s.openFiles),
            String(s.sessions.length),
            s.lastError ?? "",
            <button class="link small" data-testid="lsp-logs" onClick={() => void showLspLogs(s.name, s.root)}>
              logs
            </button>,
          ])}
        />
        {logsPanel("lsp")}
      </section>
    </div>
  );
}

function Table({ head, rows }: { head: string[]; rows: (string | preact.JSX.Element)[][] }) {
  if (!rows.length) return <div class="muted">None.</div>;
  return (
    <table class="grid">
      <thead>
        <tr>
          {head.map((h, i) => (
            <th key={i}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, i) => (
          <tr key={i}>
            {row.map((cell, j) => (
              <td key={j}>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// Usage ----------------------------------------------------------------------------------

interface Bar {
  key: string;
  label: string;
  cost: number;
  tokens: number;
}

function BarChart({ series, bars, vertical }: { series: string; bars: Bar[]; vertical: boolean }) {
  if (!bars.length) return <div class="muted">No usage.</div>;
  const max = Math.max(...bars.map((b) => b.cost), 1e-9);
  if (vertical) {
    const width = Math.max(320, bars.length * 22);
    const height = 180;
    const barWidth = Math.max(4, Math.min(40, width / bars.length - 4));
    return (
      <div class="chart-scroll">
        <svg class="chart" width={width} height={height + 40} viewBox={`0 0 ${width} ${height + 40}`} role="img">
          {bars.map((bar, i) => {
            const h = (bar.cost / max) * height;
            const x = i * (width / bars.length) + 2;
            return (
              <g key={bar.key}>
                <rect
                  data-testid="bar"
                  data-series={series}
                  data-key={bar.key}
                  data-cost={String(bar.cost)}
                  x={x}
                  y={height - h}
                  width={barWidth}
                  height={Math.max(h, bar.cost > 0 ? 1 : 0)}
                  class="bar"
                >
                  <title>{`${bar.label}: $${bar.cost.toFixed(4)}, ${tokenCount(bar.tokens)}`}</title>
                </rect>
                {(bars.length <= 16 || i % Math.ceil(bars.length / 16) === 0) && (
                  <text x={x} y={height + 14} class="axis" transform={`rotate(35 ${x} ${height + 14})`}>
                    {bar.label.slice(5)}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
      </div>
    );
  }
  const rowHeight = 22;
  const labelWidth = 260;
  const chartWidth = 420;
  return (
    <svg class="chart" width={labelWidth + chartWidth + 90} height={bars.length * rowHeight + 4} role="img">
      {bars.map((bar, i) => {
        const w = (bar.cost / max) * chartWidth;
        const y = i * rowHeight + 2;
        return (
          <g key={bar.key}>
            <text x={labelWidth - 6} y={y + 14} class="axis" text-anchor="end">
              {bar.label.length > 38 ? `…${bar.label.slice(-37)}` : bar.label}
            </text>
            <rect
              data-testid="bar"
              data-series={series}
              data-key={bar.key}
              data-cost={String(bar.cost)}
              x={labelWidth}
              y={y}
              width={Math.max(w, bar.cost > 0 ? 1 : 0)}
              height={rowHeight - 6}
              class="bar"
            >
              <title>{`${bar.label}: $${bar.cost.toFixed(4)}, ${tokenCount(bar.tokens)}`}</title>
            </rect>
            <text x={labelWidth + w + 6} y={y + 14} class="axis">
              ${bar.cost.toFixed(2)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

const RANGES: { label: string; days?: number }[] = [
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "All time" },
];

export function UsagePage() {
  const [range, setRange] = useState(1);
  const [data, setData] = useState<UsageStatsResponse>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    const client = app.client;
    if (!client) return;
    const days = RANGES[range]?.days;
    const since = days ? Date.now() - days * 86400_000 : null;
    client
      .call("usage/stats", { since })
      .then((result) => {
        setData(result);
        setError(undefined);
      })
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, [range, app.client]);

  const byProject = data?.byProject;
  return (
    <div class="page" data-testid="usage">
      <h1>Usage</h1>
      <div class="range">
        {RANGES.map((r, i) => (
          <button key={r.label} class={i === range ? "active" : ""} onClick={() => setRange(i)}>
            {r.label}
          </button>
        ))}
      </div>
      {error && <div class="error">{error}</div>}
      {data && (
        <>
          <div class="usage-total" data-testid="usage-total" data-cost={String(data.total.cost)}>
            <strong>${data.total.cost.toFixed(2)}</strong> · {plural(data.total.messages, "reply", "replies")} ·{" "}
            {tokenCount(data.total.tokens.total)} (input {formatTokens(data.total.tokens.input)}, output{" "}
            {formatTokens(data.total.tokens.output)}, cache read {formatTokens(data.total.tokens.cacheRead)})
          </div>
          <h2>Cost per day</h2>
          <BarChart
            series="day"
            vertical={true}
            bars={data.byDay.map((d) => ({ key: d.day, label: d.day, cost: d.usage.cost, tokens: d.usage.tokens.total }))}
          />
          <h2>Cost per model</h2>
          <BarChart
            series="model"
            vertical={false}
            bars={data.byModel.map((m) => ({
              key: `${m.provider}/${m.model}`,
              label: `${m.provider}/${m.model}`,
              cost: m.usage.cost,
              tokens: m.usage.tokens.total,
            }))}
          />
          {Array.isArray(byProject) && (
            <>
              <h2>Cost per project</h2>
              <BarChart
                series="project"
                vertical={false}
                bars={byProject.map((p) => ({ key: p.cwd, label: p.cwd, cost: p.usage.cost, tokens: p.usage.tokens?.total ?? 0 }))}
              />
            </>
          )}
        </>
      )}
    </div>
  );
}
