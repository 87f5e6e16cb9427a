// The live chart of the streams view: tokens sent over time, one line per stream, on a canvas.
// Plain JavaScript: a few lines of canvas drawing need no library.
"use strict";

const TIER_COLOURS = { default: "#1f77b4", priority: "#ff7f0e", flex: "#7f7f7f", ultrafast: "#c2185b" };
const CHART_WINDOW_S = 20; // the chart shows this many seconds back from now
const MAX_SERIES = 200; // lines kept at most (the oldest go first)

class TokenChart {
  constructor(canvas) {
    this.canvas = canvas;
    this.series = new Map(); // stream id -> {tier, points: [[wall seconds, tokens]]}
    this.now = 0;
  }

  // One update's rows: each stream's tokens sent at time `at`.
  add(at, rows) {
    this.now = at;
    for (const row of rows) {
      let line = this.series.get(row.id);
      if (!line) {
        line = { tier: row.tier, points: [[at - row.age_s, 0]] };
        this.series.set(row.id, line);
      }
      line.points.push([at, row.tokens_sent]);
    }
    const oldest = at - CHART_WINDOW_S;
    for (const [id, line] of this.series) {
      if (line.points[line.points.length - 1][0] < oldest) this.series.delete(id);
    }
    while (this.series.size > MAX_SERIES) this.series.delete(this.series.keys().next().value);
    this.draw();
  }

  draw() {
    const { canvas } = this;
    const g = canvas.getContext("2d");
    const w = canvas.width, h = canvas.height, left = 48, bottom = 22, right = 16;
    g.clearRect(0, 0, w, h);
    let top = 10;
    for (const line of this.series.values()) for (const p of line.points) top = Math.max(top, p[1]);
    top = niceCeiling(top);
    const x = (t) => left + ((t - (this.now - CHART_WINDOW_S)) / CHART_WINDOW_S) * (w - left - right);
    const y = (v) => h - bottom - (v / top) * (h - bottom - 8);
    g.strokeStyle = "#e3e3ea";
    g.fillStyle = "#6b6b78";
    g.font = "11px system-ui, sans-serif";
    for (let i = 0; i <= 4; i++) {
      const v = (top * i) / 4;
      g.beginPath(); g.moveTo(left, y(v)); g.lineTo(w - right, y(v)); g.stroke();
      g.fillText(String(Math.round(v)), 4, y(v) + 4);
    }
    for (let s = 0; s <= CHART_WINDOW_S; s += 5) {
      const label = s === CHART_WINDOW_S ? "now" : `-${CHART_WINDOW_S - s}s`;
      g.fillText(label, x(this.now - CHART_WINDOW_S + s) - g.measureText(label).width / 2, h - 6);
    }
    g.save();
    g.beginPath(); g.rect(left, 0, w - left, h - bottom); g.clip();
    g.lineWidth = 1.5;
    for (const line of this.series.values()) {
      g.strokeStyle = TIER_COLOURS[line.tier] || "#333";
      g.beginPath();
      line.points.forEach(([t, v], i) => (i ? g.lineTo(x(t), y(v)) : g.moveTo(x(t), y(v))));
      g.stroke();
    }
    g.restore();
  }
}

function niceCeiling(value) {
  const step = Math.pow(10, Math.floor(Math.log10(value)));
  for (const m of [1, 2, 5, 10]) if (m * step >= value) return m * step;
  return 10 * step;
}

window.TokenChart = TokenChart;
window.TIER_COLOURS = TIER_COLOURS;
window.CHART_WINDOW_S = CHART_WINDOW_S;
