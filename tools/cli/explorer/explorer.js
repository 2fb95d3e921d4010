// pteron explore: draws the program embedded in #program-data as plain SVG. No libraries, no
// network. Layout is a layered (longest-path) layout computed here in O(nodes + edges), and the
// SVG is built as one string per redraw, so programs with thousands of instructions stay quick.
"use strict";
(function () {
  const t0 = performance.now();
  const DATA = JSON.parse(document.getElementById("program-data").textContent);
  const GI = DATA.graph_info || null;  // compiler graph info (names, modules, sources, reasons)
  const NODE_W = 190, NODE_H = 34, GAP_X = 26, GAP_Y = 34, INNER_H = 16, MARGIN = 20;
  const PALETTE = ["#ffcc80", "#a5d6a7", "#ce93d8", "#80deea", "#ef9a9a", "#fff59d", "#bcaaa4"];

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
    '"': "&quot;"}[c]));
  const kib = (b) => b >= 1048576 ? (b / 1048576).toFixed(1) + " MiB" :
    b >= 1024 ? (b / 1024).toFixed(1) + " KiB" : b + " B";
  const el = (tag, attrs, html) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (html !== undefined) e.innerHTML = html;
    return e;
  };
  const DTYPE_SHORT = {Float: "f32", Half: "f16", BFloat16: "bf16", Double: "f64", Long: "i64",
    Int: "i32", Short: "i16", Char: "i8", Byte: "u8", Bool: "bool"};
  const tensorText = (v) => v && v.kind === "tensor" ?
    (DTYPE_SHORT[v.dtype] || v.dtype) + "[" + v.shape.join(",") + "]" : v ? v.kind : "?";

  // Backend colours: one per backend id, stable across methods.
  const backends = [];
  for (const m of DATA.methods) for (const d of m.delegates) {
    if (!backends.includes(d.backend)) backends.push(d.backend);
  }
  const backendColor = (b) => PALETTE[backends.indexOf(b) % PALETTE.length];

  // ---- page skeleton ----
  const header = el("header");
  header.innerHTML = "<h1>" + esc(DATA.file) + "</h1><div class='facts'>" +
    "<span>file " + kib(DATA.file_bytes) + "</span><span>constants " + kib(DATA.constant_bytes) +
    "</span><span id='method-facts'></span>" +
    (GI ? "<span>graph info: yes</span>" : "<span>graph info: none in this program</span>") +
    "<span id='status'></span></div>";
  document.body.appendChild(header);
  const legend = el("div", {class: "legend", id: "legend"});
  document.body.appendChild(legend);
  const mainEl = el("main");
  const pane = el("div", {id: "graph-pane"});
  const details = el("div", {id: "details"}, "<h2>Details</h2><p>Click an instruction, a " +
    "delegate region or a tensor in the memory plan.</p>");
  mainEl.appendChild(pane);
  mainEl.appendChild(details);
  document.body.appendChild(mainEl);
  const memory = el("section", {class: "memory", id: "memory"});
  document.body.appendChild(memory);

  let method = null;       // the method shown
  let model = null;        // its nodes and edges
  const expanded = new Set();  // delegate instruction indices shown expanded
  let selected = null;

  // ---- model: nodes (method inputs, instructions, method outputs) and value edges ----
  // Edges follow values from the instruction that writes them to those that read them. A kernel
  // writes the tensors in its "outs"; a delegate call writes the tensors it touches first.
  // Views ExecuTorch elides (no instruction, same arena bytes) are followed through storage:
  // a read of an unwritten planned tensor comes from the last writer of the same arena offset.
  function buildModel(m) {
    const nodes = [], edges = [], producer = new Map(), storage = new Map();
    const key = (t) => {
      const v = m.values[t];
      return v && v.mem_id !== undefined ? v.mem_id + ":" + v.offset : null;
    };
    const write = (t, id) => {
      producer.set(t, id);
      const k = key(t);
      if (k) storage.set(k, id);
    };
    const source = (t) => {
      if (producer.has(t)) return producer.get(t);
      const k = key(t);
      return k && storage.has(k) ? storage.get(k) : undefined;
    };
    m.inputs.forEach((v, k) => {
      write(v, nodes.length);
      nodes.push({id: nodes.length, kind: "io", label: "input " + k, value: v});
    });
    const instrNode = [];
    m.instructions.forEach((ins, i) => {
      if (ins.kind === "free") { instrNode.push(-1); return; }
      const id = nodes.length;
      instrNode.push(id);
      nodes.push({id, kind: ins.kind, label: ins.op, instr: i});
      const outs = new Set(ins.outs || ins.tensors.filter((t) => !producer.has(t) &&
        !m.values[t].constant && (ins.kind === "delegate" || m.values[t].first === i)));
      ins.outSet = outs;
      const seen = new Set();
      for (const t of ins.tensors) {
        if (outs.has(t) || m.values[t].constant) continue;
        const p = source(t);
        if (p === undefined || p === id || seen.has(p)) continue;
        seen.add(p);
        edges.push({from: p, to: id, value: t});
      }
      for (const t of outs) write(t, id);
    });
    m.outputs.forEach((v, k) => {
      const id = nodes.length;
      nodes.push({id, kind: "io", label: "output " + k, value: v});
      const p = source(v);
      if (p !== undefined) edges.push({from: p, to: id, value: v});
    });
    const isDelegate = (n) => nodes[n].kind === "delegate";
    for (const e of edges) {
      const a = nodes[e.from], b = nodes[e.to];
      e.boundary = a.kind !== "io" && b.kind !== "io" && isDelegate(e.from) !== isDelegate(e.to);
    }
    const inDegree = nodes.map(() => 0), outDegree = nodes.map(() => 0);
    for (const e of edges) { ++inDegree[e.to]; ++outDegree[e.from]; }
    return {nodes, edges, instrNode, inDegree, outDegree};
  }

  // Graph-info nodes inside a delegate call's region (empty without graph info).
  function regionNodes(i) {
    if (!GI || !GI.instructions || !GI.instructions[i]) return [];
    const r = GI.instructions[i].region;
    const ids = r !== undefined && GI.regions && GI.regions[r] ? GI.regions[r].nodes :
      GI.instructions[i].nodes || [];
    return ids.map((n) => GI.nodes[n]).filter(Boolean);
  }
  function regionLines(i) {
    const ins = method.instructions[i];
    const inner = regionNodes(i);
    if (inner.length) return inner.map((n) => n.op + (n.name ? "  " + n.name : ""));
    const d = method.delegates[ins.delegate] || {};
    return ["payload " + kib(d.payload_bytes || 0) + " (" + d.payload_location + ")"]
      .concat(ins.tensors.map((t) => "v" + t + " " + tensorText(method.values[t])));
  }

  // ---- layout: longest-path layers, rows top to bottom ----
  function layout() {
    const {nodes, edges} = model;
    const layer = new Array(nodes.length).fill(0);
    const incoming = nodes.map(() => []);
    for (const e of edges) incoming[e.to].push(e.from);
    for (const n of nodes) {  // nodes are in execution order: producers come first
      for (const p of incoming[n.id]) layer[n.id] = Math.max(layer[n.id], layer[p] + 1);
    }
    // Nodes fed only by constants (weight permutes, scalar tensors) sit just above their first
    // consumer instead of at the top with long edges.
    const consumers = nodes.map(() => []);
    for (const e of edges) consumers[e.from].push(e.to);
    for (let k = nodes.length - 1; k >= 0; --k) {
      const n = nodes[k];
      if (n.kind === "io" || incoming[k].length || !consumers[k].length) continue;
      layer[k] = Math.max(0, Math.min(...consumers[k].map((c) => layer[c])) - 1);
    }
    const rows = [];
    for (const n of nodes) {
      n.h = NODE_H;
      if (n.kind === "delegate") {
        n.h = NODE_H + 12 + (expanded.has(n.instr) ? regionLines(n.instr).length * INNER_H + 6 : 0);
      }
      (rows[layer[n.id]] = rows[layer[n.id]] || []).push(n);
    }
    let y = MARGIN, width = 0;
    for (const row of rows) {
      if (!row) continue;
      let x = MARGIN, rowH = 0;
      for (const n of row) {
        n.x = x; n.y = y;
        x += NODE_W + GAP_X;
        rowH = Math.max(rowH, n.h);
      }
      width = Math.max(width, x);
      y += rowH + GAP_Y;
    }
    return {width: width + MARGIN, height: y + MARGIN};
  }

  // ---- drawing ----
  function maxMs() {
    const ms = method.timing ? method.timing.instruction_ms.filter((x) => x !== null) : [];
    return ms.length ? Math.max(...ms) : 0;
  }
  function heat(f) {  // 0..1 -> white..red
    const g = Math.round(255 - 180 * f), b = Math.round(255 - 220 * f);
    return "rgb(255," + g + "," + b + ")";
  }

  // Graphs above VIRTUAL_NODES draw only what is near the visible part of the pane (plus a
  // margin), redrawn as it scrolls, so the DOM stays small however long the program is.
  const VIRTUAL_NODES = 600, WINDOW_MARGIN = 1500;
  let drawn = null;  // [top, bottom] of the drawn band, or null when everything is drawn

  function drawGraph() {
    const size = layout();
    pane.innerHTML = "<svg xmlns='http://www.w3.org/2000/svg' id='graph' width='" + size.width +
      "' height='" + size.height + "'></svg>";
    drawn = null;
    drawBand();
  }

  function drawBand() {
    const {nodes, edges} = model;
    const peak = maxMs();
    let top = -Infinity, bottom = Infinity;
    if (nodes.length > VIRTUAL_NODES) {
      top = pane.scrollTop - WINDOW_MARGIN;
      bottom = pane.scrollTop + pane.clientHeight + WINDOW_MARGIN;
      drawn = [top, bottom];
    }
    const parts = [];
    for (let k = 0; k < edges.length; ++k) {
      const e = edges[k], a = nodes[e.from], b = nodes[e.to];
      const x1 = a.x + NODE_W / 2, y1 = a.y + a.h, x2 = b.x + NODE_W / 2, y2 = b.y;
      if (Math.max(y1, y2) < top || Math.min(y1, y2) > bottom) continue;
      const my = (y1 + y2) / 2;
      parts.push("<path class='edge" + (e.boundary ? " boundary" : "") + "' data-edge='" + k +
        "' d='M" + x1 + "," + y1 + " C" + x1 + "," + my + " " + x2 + "," + my + " " + x2 + "," +
        y2 + "'><title>v" + e.value + " " + esc(tensorText(method.values[e.value])) +
        (e.boundary ? " (kernel/delegate boundary)" : "") + "</title></path>");
    }
    for (const n of nodes) {
      if (n.y + n.h < top || n.y > bottom) continue;
      const ins = n.instr !== undefined ? method.instructions[n.instr] : null;
      const ms = ins && method.timing ? method.timing.instruction_ms[n.instr] : null;
      let cls = "node " + (n.kind === "kernel" || n.kind === "delegate" || n.kind === "io" ?
        n.kind : "other");
      if (n.kind === "delegate") cls += " region";
      if (selected === n.id) cls += " selected";
      let fill = "";
      if (n.kind === "delegate") fill = backendColor(n.label);
      if (ms !== null && ms !== undefined && peak > 0 && n.kind !== "delegate") {
        fill = heat(ms / peak);
      }
      parts.push("<g class='" + cls + "' data-node='" + n.id + "' data-op='" + esc(n.label) + "'" +
        (ins ? " data-instruction='" + n.instr + "'" : "") +
        (n.kind === "delegate" ? " data-backend='" + esc(n.label) + "'" : "") +
        " transform='translate(" + n.x + "," + n.y + ")'>");
      parts.push("<rect class='frame' width='" + NODE_W + "' height='" + n.h + "' rx='5'" +
        (fill ? " style='fill:" + fill + "'" : "") + "></rect>");
      let title = n.label;
      if (n.kind === "io") title += " " + tensorText(method.values[n.value]);
      const short = title.replace(/^aten::/, "").slice(0, 30);
      parts.push("<text x='8' y='14'>" + esc(short) + "</text>");
      let sub = ins ? "#" + n.instr : "";
      if (ms !== null && ms !== undefined) sub += "  " + ms.toFixed(3) + " ms";
      if (n.kind === "delegate") {
        const d = method.delegates[ins.delegate] || {};
        sub += "  " + kib(d.payload_bytes || 0) + "  " + regionIo(n.instr);
        parts.push("<text class='toggle' x='" + (NODE_W - 16) + "' y='14'>" +
          (expanded.has(n.instr) ? "\u2212" : "+") + "</text>");
      }
      parts.push("<text x='8' y='28' fill='#546e7a'>" + esc(sub) + "</text>");
      if (n.kind === "delegate" && expanded.has(n.instr)) {
        parts.push("<g class='inner'>");
        regionLines(n.instr).forEach((line, k) => {
          const y = NODE_H + 8 + k * INNER_H;
          parts.push("<rect class='inner-node' x='6' y='" + (y - 2) + "' width='" + (NODE_W - 12) +
            "' height='" + (INNER_H - 2) + "' rx='3'></rect><text x='10' y='" + (y + 10) + "'>" +
            esc(line.replace(/^aten::/, "").slice(0, 32)) + "</text>");
        });
        parts.push("</g>");
      }
      parts.push("</g>");
    }
    document.getElementById("graph").innerHTML = parts.join("");
  }

  pane.addEventListener("scroll", () => {
    if (!drawn) return;
    const margin = WINDOW_MARGIN / 3;
    if (pane.scrollTop < drawn[0] + margin ||
        pane.scrollTop + pane.clientHeight > drawn[1] - margin) {
      drawn = null;  // one redraw per frame at most
      requestAnimationFrame(drawBand);
    }
  });

  function regionIo(i) {
    const id = model.instrNode[i];
    return model.inDegree[id] + " in / " + model.outDegree[id] + " out";
  }

  // ---- details ----
  function valueRow(t, role) {
    const v = method.values[t] || {kind: "?"};
    let where = "";
    if (v.kind === "tensor") {
      where = v.mem_id !== undefined ? "arena " + v.mem_id + " @ " + v.offset :
        v.constant ? "constant" : "caller";
      where += ", " + kib(v.bytes);
    } else if (v.value !== undefined) {
      where = esc(JSON.stringify(v.value)).slice(0, 80);
    }
    return "<tr><td>v" + t + "</td><td>" + role + "</td><td>" + esc(tensorText(v)) + "</td><td>" +
      where + "</td></tr>";
  }

  function showNode(id) {
    selected = id;
    for (const g of pane.querySelectorAll(".node.selected")) g.classList.remove("selected");
    const g = pane.querySelector(".node[data-node='" + id + "']");
    if (g) g.classList.add("selected");
    for (const p of pane.querySelectorAll(".edge.hl")) p.classList.remove("hl");
    model.edges.forEach((e, k) => {
      if (e.from === id || e.to === id) {
        const p = pane.querySelector(".edge[data-edge='" + k + "']");
        if (p) p.classList.add("hl");
      }
    });
    const n = model.nodes[id];
    let html = "<h2>" + esc(n.label) + "</h2>";
    if (n.kind === "io") {
      html += "<table>" + valueRow(n.value, n.label.split(" ")[0]) + "</table>";
      details.innerHTML = html;
      return;
    }
    const ins = method.instructions[n.instr];
    html += "<p>instruction #" + n.instr + " (" + ins.kind + ")";
    if (method.timing && method.timing.instruction_ms[n.instr] !== null) {
      html += ", median " + method.timing.instruction_ms[n.instr].toFixed(4) + " ms per run";
    }
    html += "</p>";
    if (ins.kind === "delegate") {
      const d = method.delegates[ins.delegate] || {};
      html += "<p>backend <b>" + esc(d.backend) + "</b>, payload " + kib(d.payload_bytes || 0) +
        " (" + esc(d.payload_location) + "), " + regionIo(n.instr) + "</p>";
    }
    const written = ins.outSet || new Set();
    html += "<table><tr><th>value</th><th>role</th><th>type</th><th>where</th></tr>";
    const shown = new Set();  // ExecuTorch appends the returned value again: list it once
    for (const a of ins.args) {
      if (shown.has(a)) continue;
      shown.add(a);
      const v = method.values[a] || {};
      const role = v.kind === "tensor" ? written.has(a) ? "out" : "in" :
        v.items ? "list" : "arg";
      html += valueRow(a, role);
    }
    html += "</table>";
    const gnodes = GI && GI.instructions && GI.instructions[n.instr] ?
      ins.kind === "delegate" ? regionNodes(n.instr) :
        (GI.instructions[n.instr].nodes || []).map((k) => GI.nodes[k]).filter(Boolean) : [];
    if (gnodes.length) {
      html += "<h2>graph nodes</h2><table>";
      for (const g of gnodes) {
        html += "<tr><td><b>" + esc(g.name || "") + "</b><br>" + esc(g.op || "") +
          (g.module ? "<br>module " + esc(g.module) : "") +
          (g.source ? "<br>" + esc(g.source) : "") +
          (g.runs_on ? "<br>runs on " + esc(g.runs_on) : "") +
          (g.reasons && g.reasons.length ?
            "<br><span class='why'>not delegated: " + g.reasons.map(esc).join("; ") + "</span>" :
            "") + "</td></tr>";
      }
      html += "</table>";
    } else if (!GI) {
      html += "<p>This program carries no graph info (node names, module paths, source lines, " +
        "reasons not delegated).</p>";
    }
    details.innerHTML = html;
  }

  pane.addEventListener("click", (ev) => {
    const g = ev.target.closest(".node");
    if (!g) return;
    const id = Number(g.dataset.node);
    const n = model.nodes[id];
    if (n.kind === "delegate" && ev.target.classList.contains("toggle") ||
        n.kind === "delegate" && ev.detail === 2) {
      if (expanded.has(n.instr)) expanded.delete(n.instr); else expanded.add(n.instr);
      drawGraph();
    }
    showNode(id);
  });

  // ---- memory plan: planned tensors' lifetimes (x) against arena offsets (y) ----
  function drawMemory() {
    const n = method.instructions.length;
    const W = 1000, H = 260, LEFT = 70;
    let html = "<h2>Memory plan: tensor lifetimes against arena offsets</h2>";
    if (!method.arenas.length) html += "<p>No planned arenas.</p>";
    for (const arena of method.arenas) {
      const tensors = [];
      method.values.forEach((v, k) => {
        if (v.kind === "tensor" && v.mem_id === arena.mem_id && v.first !== undefined) {
          tensors.push(k);
        }
      });
      const bytes = Math.max(1, arena.bytes);
      const xs = (i) => LEFT + (i + 1) / (n + 2) * W;
      const parts = ["<svg xmlns='http://www.w3.org/2000/svg' class='arena' data-mem-id='" +
        arena.mem_id + "' width='" + (LEFT + W + 20) + "' height='" + (H + 30) + "'>",
        "<line class='axis' x1='" + LEFT + "' y1='0' x2='" + LEFT + "' y2='" + H + "'></line>",
        "<line class='axis' x1='" + LEFT + "' y1='" + H + "' x2='" + (LEFT + W) + "' y2='" + H +
        "'></line>", "<text x='4' y='12'>0</text><text x='4' y='" + H + "'>" + kib(bytes) +
        "</text><text x='" + LEFT + "' y='" + (H + 14) + "'>instruction 0</text><text x='" +
        (LEFT + W - 80) + "' y='" + (H + 14) + "'>" + (n - 1) + "</text>"];
      for (const k of tensors) {
        const v = method.values[k];
        const x = xs(v.first - 0.5), w = Math.max(1, xs(v.last + 0.5) - x);
        const y = v.offset / bytes * H, h = Math.max(1, v.bytes / bytes * H);
        const hue = (k * 47) % 360;
        parts.push("<rect class='tensor' data-value='" + k + "' x='" + x.toFixed(1) + "' y='" +
          y.toFixed(1) + "' width='" + w.toFixed(1) + "' height='" + h.toFixed(1) +
          "' style='fill:hsl(" + hue + ",60%,70%)'><title>v" + k + " " + esc(tensorText(v)) +
          ", " + kib(v.bytes) + " @ " + v.offset + ", live #" + v.first + "..#" + v.last +
          "</title></rect>");
      }
      parts.push("</svg>");
      html += "<div>arena " + arena.mem_id + ": " + kib(arena.bytes) + ", " + tensors.length +
        " tensors</div>" + parts.join("");
    }
    memory.innerHTML = html;
  }

  memory.addEventListener("click", (ev) => {
    const r = ev.target.closest(".tensor");
    if (!r) return;
    for (const s of memory.querySelectorAll(".tensor.selected")) s.classList.remove("selected");
    r.classList.add("selected");
    const k = Number(r.dataset.value), v = method.values[k];
    const users = [];
    method.instructions.forEach((ins, i) => { if (ins.tensors.includes(k)) users.push(i); });
    details.innerHTML = "<h2>tensor v" + k + "</h2><table>" + valueRow(k, "tensor") +
      "</table><p>live from instruction " + v.first + " to " + v.last + "; used by " +
      users.map((i) => "#" + i + " " + esc(method.instructions[i].op)).join(", ") + "</p>";
  });

  // ---- method choice, legend, first draw ----
  function showMethod(k) {
    method = DATA.methods[k];
    model = buildModel(method);
    expanded.clear();
    selected = null;
    const kernels = method.instructions.filter((i) => i.kind === "kernel").length;
    const calls = method.instructions.filter((i) => i.kind === "delegate").length;
    document.getElementById("method-facts").textContent = "method " + method.name + ": " +
      method.instructions.length + " instructions (" + kernels + " kernel calls, " + calls +
      " delegate calls), " + method.values.length + " values";
    let lg = "";
    if (DATA.methods.length > 1) {
      lg += "method <select id='method'>" + DATA.methods.map((m, j) => "<option value='" + j +
        "'" + (j === k ? " selected" : "") + ">" + esc(m.name) + "</option>").join("") +
        "</select> ";
    }
    lg += "<span class='swatch' style='background:#e3f2fd'></span>kernel";
    for (const b of backends) {
      lg += "<span class='swatch' style='background:" + backendColor(b) + "'></span>" + esc(b) +
        " (delegate; + or double-click expands)";
    }
    lg += "<span class='swatch' style='background:#fff;border:2px dashed #d81b60'></span>" +
      "kernel/delegate boundary";
    if (method.timing) {
      const s = method.timing.summary;
      lg += "<span class='swatch' style='background:" + heat(1) + "'></span>slowest (" +
        maxMs().toFixed(3) + " ms) &nbsp; timing: wall " + s.wall_ms.toFixed(3) + " ms/run, " +
        "events " + s.covered_ms.toFixed(3) + " ms, not covered " + s.uncovered_ms.toFixed(3) +
        " ms (" + (100 * s.uncovered_share).toFixed(1) + "%), " + s.runs + " run(s)";
    }
    legend.innerHTML = lg;
    const sel = document.getElementById("method");
    if (sel) sel.addEventListener("change", () => showMethod(Number(sel.value)));
    drawGraph();
    drawMemory();
  }

  const first = DATA.methods.findIndex((m) => m.name === "forward");
  showMethod(first >= 0 ? first : 0);
  // Deep links (also used by tests): #expand expands every delegate region, #instruction=N
  // selects instruction N.
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.has("expand")) {
    method.instructions.forEach((ins, i) => { if (ins.kind === "delegate") expanded.add(i); });
    drawGraph();
  }
  if (hash.has("instruction")) {
    const node = model.instrNode[Number(hash.get("instruction"))];
    if (node !== undefined && node >= 0) {
      pane.scrollTop = Math.max(0, model.nodes[node].y - 100);
      drawBand();
      showNode(node);
    }
  }
  const ms = performance.now() - t0;
  document.getElementById("status").textContent = "rendered in " + ms.toFixed(0) + " ms";
  document.body.dataset.renderMs = ms.toFixed(1);
  document.body.dataset.drawnNodes = String(pane.querySelectorAll(".node").length);
  document.body.dataset.rendered = "1";
})();
