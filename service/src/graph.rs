//! Pictures of a module: `hlorun graph` as Graphviz DOT, SVG or a
//! self-contained HTML page, with every fusion drawn as a cluster of the ops
//! it holds.
//!
//! SVG and HTML need no Graphviz: the layout is done here, layered the way
//! `dot` does it, kept simple. Operands sit above their users: each
//! instruction's layer is its longest path from a parameter; within a layer
//! the order comes from a few sweeps of the barycenter heuristic (each node
//! moves toward the mean position of its neighbours in the layer above, then
//! below), and x positions are pulled toward the neighbours' centres and then
//! pushed apart so that nothing overlaps. A fusion is laid out on its own
//! first (its fused computation, recursively) and then placed as one large
//! node of its caller, so its cluster is a box that holds its ops; an edge
//! into a fusion ends at the fused parameter it feeds. Edges are curves from
//! an operand's bottom to its user's top.
//!
//! The DOT form is for people with Graphviz who want its layout or another
//! format (`dot -Tpdf`): the same nodes, fusions as `subgraph cluster_*`.

use platform_api::hlo::{CompId, HloComputation, HloInstruction, HloModule, InstrId, Op};
use platform_api::{Error, Opcode, Result};
use std::collections::HashMap;
use std::fmt::Write;

/// The largest graph drawn (nodes, fused ops included): beyond this a picture
/// is unreadable and the layout slow; DOT has no limit.
pub const MAX_DRAWN_NODES: usize = 20_000;

const CHAR_W: f64 = 7.0;
const LINE_H: f64 = 14.0;
const NODE_PAD_X: f64 = 10.0;
const NODE_PAD_Y: f64 = 6.0;
const GAP_X: f64 = 24.0;
const GAP_Y: f64 = 40.0;
const CLUSTER_PAD: f64 = 12.0;
const CLUSTER_TITLE_H: f64 = 18.0;
const MAX_LABEL_CHARS: usize = 48;

/// What a node looks like: its lines of text, colour and tooltip.
struct Label {
    lines: Vec<String>,
    fill: &'static str,
    tooltip: String,
}

/// A laid-out computation: its nodes (instruction order) with their boxes,
/// and the overall size.
struct Layout {
    nodes: Vec<Node>,
    width: f64,
    height: f64,
}

struct Node {
    id: InstrId,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    kind: NodeKind,
}

enum NodeKind {
    Box(Label),
    /// A fusion: its title and its fused computation's layout, drawn inside.
    Cluster {
        title: String,
        tooltip: String,
        inner: Box<Layout>,
    },
}

impl Node {
    /// Where an edge carrying operand `operand` into this node ends: the fused
    /// parameter it feeds inside a cluster, else the top centre.
    fn input_point(
        &self,
        module: &HloModule,
        instr: &HloInstruction,
        operand: usize,
    ) -> (f64, f64) {
        if let NodeKind::Cluster { inner, .. } = &self.kind {
            let fused = fused_computation(instr).and_then(|c| module.computations.get(c.index()));
            if let Some(fused) = fused {
                let param = fused
                    .instructions
                    .iter()
                    .position(|i| matches!(i.op, Op::Parameter { number } if number == operand));
                if let Some(p) = param.and_then(|p| inner.nodes.iter().find(|n| n.id.index() == p))
                {
                    return (
                        self.x + CLUSTER_PAD + p.x + p.w / 2.0,
                        self.y + CLUSTER_TITLE_H + CLUSTER_PAD + p.y,
                    );
                }
            }
        }
        (self.x + self.w / 2.0, self.y)
    }
}

/// The computation to draw: `name`, else the entry.
pub fn pick_computation(module: &HloModule, name: Option<&str>) -> Result<CompId> {
    match name {
        None => Ok(module.entry),
        Some(n) => module
            .computations
            .iter()
            .position(|c| c.name == n || c.name == n.trim_start_matches('%'))
            .map(|i| CompId(i as u32))
            .ok_or_else(|| {
                let names: Vec<&str> = module
                    .computations
                    .iter()
                    .take(20)
                    .map(|c| c.name.as_str())
                    .collect();
                Error::not_found(format!(
                    "no computation {n:?} in module {}; it has {}{}",
                    module.name,
                    names.join(", "),
                    if module.computations.len() > 20 {
                        ", ..."
                    } else {
                        ""
                    }
                ))
            }),
    }
}

fn fused_computation(instr: &HloInstruction) -> Option<CompId> {
    match &instr.op {
        Op::Fusion { calls, .. } => Some(*calls),
        _ => None,
    }
}

/// Nodes a drawing of `comp` would hold, fused ops included.
fn count_nodes(module: &HloModule, comp: CompId, depth: usize) -> usize {
    let Some(c) = module.computations.get(comp.index()) else {
        return 0;
    };
    if depth > 64 {
        return c.instructions.len();
    }
    c.instructions
        .iter()
        .map(|i| match fused_computation(i) {
            Some(f) => 1 + count_nodes(module, f, depth + 1),
            None => 1,
        })
        .sum()
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let head: String = s.chars().take(n.saturating_sub(3)).collect();
        format!("{head}...")
    }
}

/// A colour per kind of op, so a reader finds the heavy ones at a glance.
fn fill(op: Opcode) -> &'static str {
    use Opcode::*;
    match op {
        Parameter => "#d9f2d9",
        Constant | Iota => "#eeeeee",
        Dot | Convolution | Fft | TriangularSolve | Cholesky => "#ffd59e",
        Reduce | ReduceWindow | SelectAndScatter | Scatter | Sort | AllReduce | ReduceScatter => {
            "#c6dcff"
        }
        While | Conditional | Call | CustomCall => "#e6d5f5",
        Broadcast | Reshape | Transpose | Slice | DynamicSlice | DynamicUpdateSlice
        | Concatenate | Pad | Gather | Reverse | Copy | Bitcast | Tuple | GetTupleElement => {
            "#fff7cc"
        }
        _ => "#ffffff",
    }
}

fn label(instr: &HloInstruction) -> Label {
    let op = instr.opcode();
    let mut tooltip = format!(
        "%{} = {} {}",
        instr.name,
        instr.shape.without_layout(),
        op.name()
    );
    if let Some(m) = &instr.metadata {
        if let Some(n) = &m.op_name {
            tooltip.push_str(&format!("\n{n}"));
        }
        if let (Some(f), line) = (&m.source_file, m.source_line) {
            tooltip.push_str(&format!(
                "\n{f}{}",
                line.map(|l| format!(":{l}")).unwrap_or_default()
            ));
        }
    }
    let first = match &instr.op {
        Op::Parameter { number } => format!("parameter {number}"),
        _ => op.name().to_string(),
    };
    Label {
        lines: vec![
            clip(&first, MAX_LABEL_CHARS),
            clip(&instr.shape.without_layout().to_string(), MAX_LABEL_CHARS),
            clip(&format!("%{}", instr.name), MAX_LABEL_CHARS),
        ],
        fill: fill(op),
        tooltip,
    }
}

/// The layers one sweep visits: downward from the second (each placed by
/// the layer above), or upward from the second to last (by the layer below).
fn sweep_layers(layers: usize, down: bool) -> Vec<usize> {
    if down {
        (1..layers).collect()
    } else {
        (0..layers.saturating_sub(1)).rev().collect()
    }
}

/// Lays out computation `comp` (fusions inside it first, recursively).
fn layout(module: &HloModule, comp: CompId, depth: usize) -> Result<Layout> {
    platform_api::hlo::stack::deep(|| layout_on_this_stack(module, comp, depth))
}

fn layout_on_this_stack(module: &HloModule, comp_id: CompId, depth: usize) -> Result<Layout> {
    let comp: &HloComputation = module
        .computations
        .get(comp_id.index())
        .ok_or_else(|| Error::invalid_argument(format!("no computation #{}", comp_id.0)))?;
    let n = comp.instructions.len();
    // Boxes first: their sizes drive the layout.
    let mut nodes: Vec<Node> = Vec::with_capacity(n);
    for (i, instr) in comp.instructions.iter().enumerate() {
        let id = InstrId(i as u32);
        let kind = match fused_computation(instr) {
            Some(fused) if depth < 64 => NodeKind::Cluster {
                title: clip(
                    &format!("%{} ({})", instr.name, instr.shape.without_layout()),
                    MAX_LABEL_CHARS + 16,
                ),
                tooltip: label(instr).tooltip,
                inner: Box::new(layout(module, fused, depth + 1)?),
            },
            _ => NodeKind::Box(label(instr)),
        };
        let (w, h) = match &kind {
            NodeKind::Box(l) => {
                let chars = l.lines.iter().map(|s| s.chars().count()).max().unwrap_or(1);
                (
                    chars as f64 * CHAR_W + 2.0 * NODE_PAD_X,
                    l.lines.len() as f64 * LINE_H + 2.0 * NODE_PAD_Y,
                )
            }
            NodeKind::Cluster { title, inner, .. } => (
                (inner.width + 2.0 * CLUSTER_PAD)
                    .max(title.chars().count() as f64 * CHAR_W + 2.0 * CLUSTER_PAD),
                inner.height + 2.0 * CLUSTER_PAD + CLUSTER_TITLE_H,
            ),
        };
        nodes.push(Node {
            id,
            x: 0.0,
            y: 0.0,
            w,
            h,
            kind,
        });
    }

    // Layers: longest path from the sources, in a topological order (Kahn's).
    let operands: Vec<Vec<usize>> = comp
        .instructions
        .iter()
        .map(|i| {
            i.operands
                .iter()
                .chain(&i.control_predecessors)
                .map(|o| o.index())
                .filter(|&o| o < n)
                .collect()
        })
        .collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pending: Vec<usize> = vec![0; n];
    for (u, ops) in operands.iter().enumerate() {
        for &o in ops {
            users[o].push(u);
            pending[u] += 1;
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).collect();
    let mut head = 0;
    while head < order.len() {
        let v = order[head];
        head += 1;
        for &u in &users[v] {
            pending[u] -= 1;
            if pending[u] == 0 {
                order.push(u);
            }
        }
    }
    if order.len() < n {
        // A cycle (only in a malformed module): the rest in text order.
        let placed: std::collections::HashSet<usize> = order.iter().copied().collect();
        order.extend((0..n).filter(|i| !placed.contains(i)));
    }
    let mut layer = vec![0usize; n];
    for &v in &order {
        layer[v] = operands[v]
            .iter()
            .map(|&o| layer[o] + 1)
            .max()
            .unwrap_or(0)
            .max(layer[v]);
    }
    // Constants and other leaves that are not parameters sit just above
    // their first user rather than all at the top.
    for v in 0..n {
        let leaf =
            operands[v].is_empty() && !matches!(comp.instructions[v].op, Op::Parameter { .. });
        if let (true, Some(first_use)) = (leaf, users[v].iter().map(|&u| layer[u]).min()) {
            layer[v] = first_use.saturating_sub(1);
        }
    }
    let layers = layer.iter().max().map_or(0, |m| m + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for &v in &order {
        rows[layer[v]].push(v);
    }

    // Order within layers: barycenter sweeps, down then up.
    let mut pos = vec![0f64; n];
    for row in &rows {
        for (k, &v) in row.iter().enumerate() {
            pos[v] = k as f64;
        }
    }
    for sweep in 0..4 {
        let down = sweep % 2 == 0;
        for l in sweep_layers(layers, down) {
            let mut keyed: Vec<(f64, usize)> = rows[l]
                .iter()
                .map(|&v| {
                    let nbrs = if down { &operands[v] } else { &users[v] };
                    let key = if nbrs.is_empty() {
                        pos[v]
                    } else {
                        nbrs.iter().map(|&u| pos[u]).sum::<f64>() / nbrs.len() as f64
                    };
                    (key, v)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            rows[l] = keyed.into_iter().map(|(_, v)| v).collect();
            for (k, &v) in rows[l].iter().enumerate() {
                pos[v] = k as f64;
            }
        }
    }

    // y per layer; x packed, then pulled toward neighbours and pushed apart.
    let mut y = 0.0;
    for row in &rows {
        let h = row.iter().map(|&v| nodes[v].h).fold(0.0, f64::max);
        for &v in row {
            nodes[v].y = y + (h - nodes[v].h) / 2.0;
        }
        y += h + GAP_Y;
    }
    let height = (y - GAP_Y).max(0.0);
    for row in &rows {
        let mut x = 0.0;
        for &v in row {
            nodes[v].x = x;
            x += nodes[v].w + GAP_X;
        }
    }
    for round in 0..6 {
        let down = round % 2 == 0;
        for l in sweep_layers(layers, down) {
            let row = &rows[l];
            let mut want: Vec<f64> = row
                .iter()
                .map(|&v| {
                    let nbrs = if down { &operands[v] } else { &users[v] };
                    if nbrs.is_empty() {
                        nodes[v].x
                    } else {
                        let c = nbrs
                            .iter()
                            .map(|&u| nodes[u].x + nodes[u].w / 2.0)
                            .sum::<f64>()
                            / nbrs.len() as f64;
                        c - nodes[v].w / 2.0
                    }
                })
                .collect();
            // Push apart left to right, then right to left, keeping order.
            for k in 1..row.len() {
                let min = want[k - 1] + nodes[row[k - 1]].w + GAP_X;
                if want[k] < min {
                    want[k] = min;
                }
            }
            for k in (0..row.len().saturating_sub(1)).rev() {
                let max = want[k + 1] - nodes[row[k]].w - GAP_X;
                if want[k] > max {
                    want[k] = max;
                }
            }
            for (k, &v) in row.iter().enumerate() {
                nodes[v].x = want[k];
            }
        }
    }
    // Shift everything to start at x = 0.
    let min_x = nodes.iter().map(|n| n.x).fold(f64::INFINITY, f64::min);
    let min_x = if min_x.is_finite() { min_x } else { 0.0 };
    for node in &mut nodes {
        node.x -= min_x;
    }
    let width = nodes.iter().map(|n| n.x + n.w).fold(0.0, f64::max);
    Ok(Layout {
        nodes,
        width,
        height,
    })
}

fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Draws `layout` of computation `comp` at offset (`dx`, `dy`).
fn draw(out: &mut String, module: &HloModule, comp: CompId, layout: &Layout, dx: f64, dy: f64) {
    let Some(c) = module.computations.get(comp.index()) else {
        return;
    };
    // Edges under the boxes.
    for node in &layout.nodes {
        let instr = c.instr(node.id);
        for (k, o) in instr.operands.iter().enumerate() {
            let Some(src) = layout.nodes.get(o.index()) else {
                continue;
            };
            let (x1, y1) = (dx + src.x + src.w / 2.0, dy + src.y + src.h);
            let (tx, ty) = node.input_point(module, instr, k);
            let (x2, y2) = (dx + tx, dy + ty);
            let bend = ((y2 - y1) / 2.0).max(GAP_Y / 2.0);
            let _ = writeln!(
                out,
                "<path class=\"edge\" d=\"M{x1:.1},{y1:.1} C{x1:.1},{:.1} {x2:.1},{:.1} {x2:.1},{y2:.1}\"/>",
                y1 + bend,
                y2 - bend
            );
        }
    }
    for node in &layout.nodes {
        let (x, y) = (dx + node.x, dy + node.y);
        match &node.kind {
            NodeKind::Box(l) => {
                let root = c.root == node.id;
                let _ = writeln!(
                    out,
                    "<g class=\"node\"><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"{}\"{}/>",
                    xml(&l.tooltip),
                    node.w,
                    node.h,
                    l.fill,
                    if root { " class=\"root\"" } else { "" }
                );
                for (i, line) in l.lines.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "<text x=\"{:.1}\" y=\"{:.1}\"{}>{}</text>",
                        x + node.w / 2.0,
                        y + NODE_PAD_Y + (i as f64 + 0.8) * LINE_H,
                        if i == 0 { " class=\"op\"" } else { "" },
                        xml(line)
                    );
                }
                out.push_str("</g>\n");
            }
            NodeKind::Cluster {
                title,
                tooltip,
                inner,
            } => {
                let _ = writeln!(
                    out,
                    "<g class=\"cluster\"><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"6\"/>\
                     <text x=\"{:.1}\" y=\"{:.1}\" class=\"title\">{}</text></g>",
                    xml(tooltip),
                    node.w,
                    node.h,
                    x + CLUSTER_PAD,
                    y + CLUSTER_TITLE_H - 4.0,
                    xml(title)
                );
                if let Some(fused) = fused_computation(c.instr(node.id)) {
                    draw(
                        out,
                        module,
                        fused,
                        inner,
                        x + CLUSTER_PAD,
                        y + CLUSTER_TITLE_H + CLUSTER_PAD,
                    );
                }
            }
        }
    }
}

const STYLE: &str = "\
.edge{fill:none;stroke:#777;stroke-width:1.2;marker-end:url(#arrow)}\
.node rect{stroke:#555;stroke-width:1}\
.node rect.root{stroke:#c00;stroke-width:2.5}\
.cluster rect{fill:#eef5ff;fill-opacity:0.6;stroke:#4a7bd0;stroke-dasharray:5 3}\
text{font-family:monospace;font-size:11px;text-anchor:middle;fill:#222}\
text.op{font-weight:bold}\
text.title{text-anchor:start;fill:#24508f;font-weight:bold}";

/// The SVG picture of computation `comp` of `module`.
pub fn to_svg(module: &HloModule, comp: CompId) -> Result<String> {
    let nodes = count_nodes(module, comp, 0);
    if nodes > MAX_DRAWN_NODES {
        return Err(Error::resource_exhausted(format!(
            "the graph has {nodes} nodes, more than the {MAX_DRAWN_NODES} drawn as a picture; \
             write --format dot for Graphviz, or pick one computation with --computation"
        )));
    }
    let layout = layout(module, comp, 0)?;
    let margin = 20.0;
    let (w, h) = (
        layout.width + 2.0 * margin,
        layout.height + 2.0 * margin + 24.0,
    );
    let mut out = String::new();
    let title = module
        .computations
        .get(comp.index())
        .map(|c| format!("{} / {}", module.name, c.name))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.1} {h:.1}\">"
    );
    let _ = writeln!(
        out,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#777\"/></marker></defs>"
    );
    let _ = writeln!(out, "<style>{STYLE}</style>");
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        out,
        "<text x=\"{margin}\" y=\"18\" class=\"title\">{}</text>",
        xml(&title)
    );
    draw(&mut out, module, comp, &layout, margin, margin + 24.0);
    out.push_str("</svg>\n");
    Ok(out)
}

/// A self-contained HTML page around the SVG: drag to pan, wheel to zoom,
/// hover for an instruction's shape, JAX op name and source line.
pub fn to_html(module: &HloModule, comp: CompId) -> Result<String> {
    let svg = to_svg(module, comp)?;
    Ok(format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\n<style>\
         html,body{{margin:0;height:100%;overflow:hidden;background:#fafafa}}\
         #view{{width:100%;height:100%;cursor:grab}}\
         #help{{position:fixed;right:10px;top:8px;font:12px sans-serif;color:#555}}</style></head>\n\
         <body><div id=\"help\">drag: pan, wheel: zoom, hover: details</div><div id=\"view\">\n{svg}</div>\n<script>\n{}</script></body></html>\n",
        xml(&module.name),
        PAN_ZOOM_JS
    ))
}

const PAN_ZOOM_JS: &str = r#"(function () {
  var view = document.getElementById('view');
  var svg = view.querySelector('svg');
  var w = svg.viewBox.baseVal.width, h = svg.viewBox.baseVal.height;
  svg.setAttribute('width', '100%'); svg.setAttribute('height', '100%');
  var box = {x: 0, y: 0, w: w, h: h};
  function show() { svg.setAttribute('viewBox', box.x + ' ' + box.y + ' ' + box.w + ' ' + box.h); }
  var drag = null;
  view.addEventListener('mousedown', function (e) { drag = {x: e.clientX, y: e.clientY}; });
  window.addEventListener('mouseup', function () { drag = null; });
  window.addEventListener('mousemove', function (e) {
    if (!drag) return;
    var s = box.w / view.clientWidth;
    box.x -= (e.clientX - drag.x) * s; box.y -= (e.clientY - drag.y) * s;
    drag = {x: e.clientX, y: e.clientY}; show();
  });
  view.addEventListener('wheel', function (e) {
    e.preventDefault();
    var f = e.deltaY > 0 ? 1.15 : 1 / 1.15;
    var r = view.getBoundingClientRect();
    var px = box.x + (e.clientX - r.left) / r.width * box.w;
    var py = box.y + (e.clientY - r.top) / r.height * box.h;
    box.w *= f; box.h *= f;
    box.x = px - (px - box.x) * f; box.y = py - (py - box.y) * f; show();
  }, {passive: false});
  show();
})();
"#;

fn dot_id(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    )
}

/// Graphviz DOT of computation `comp`: one node per instruction, fusions as
/// clusters holding their fused ops.
pub fn to_dot(module: &HloModule, comp: CompId) -> Result<String> {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", dot_id(&module.name));
    out.push_str(
        "  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fontsize=10];\n",
    );
    out.push_str("  compound=true;\n");
    let mut ids: HashMap<(u32, u32), String> = HashMap::new();
    let mut next = 0usize;
    dot_computation(&mut out, module, comp, 1, &mut ids, &mut next)?;
    out.push_str("}\n");
    Ok(out)
}

fn dot_computation(
    out: &mut String,
    module: &HloModule,
    comp: CompId,
    depth: usize,
    ids: &mut HashMap<(u32, u32), String>,
    next: &mut usize,
) -> Result<()> {
    platform_api::hlo::stack::deep(|| {
        let c = module
            .computations
            .get(comp.index())
            .ok_or_else(|| Error::invalid_argument(format!("no computation #{}", comp.0)))?;
        let indent = "  ".repeat(depth);
        for (i, instr) in c.instructions.iter().enumerate() {
            let id = format!("n{}", *next);
            *next += 1;
            ids.insert((comp.0, i as u32), id.clone());
            match fused_computation(instr) {
                Some(fused) if depth < 64 => {
                    let _ = writeln!(out, "{indent}subgraph cluster_{id} {{");
                    let _ = writeln!(
                        out,
                        "{indent}  label={}; style=dashed; color=\"#4a7bd0\";",
                        dot_id(&format!(
                            "%{} ({})",
                            instr.name,
                            instr.shape.without_layout()
                        ))
                    );
                    dot_computation(out, module, fused, depth + 1, ids, next)?;
                    let _ = writeln!(out, "{indent}}}");
                }
                _ => {
                    let l = label(instr);
                    let _ = writeln!(
                        out,
                        "{indent}{id} [label={}, fillcolor=\"{}\", tooltip={}{}];",
                        dot_id(&l.lines.join("\n")),
                        l.fill,
                        dot_id(&l.tooltip),
                        if c.root.index() == i {
                            ", penwidth=2.5, color=\"#cc0000\""
                        } else {
                            ""
                        }
                    );
                }
            }
        }
        for (i, instr) in c.instructions.iter().enumerate() {
            for (k, o) in instr.operands.iter().enumerate() {
                let Some(src) = dot_endpoint(module, ids, comp, o.index(), None) else {
                    continue;
                };
                let Some(dst) = dot_endpoint(module, ids, comp, i, Some(k)) else {
                    continue;
                };
                let _ = writeln!(out, "{indent}{src} -> {dst};");
            }
        }
        Ok(())
    })
}

/// The DOT node an edge uses for instruction `i` of `comp`: itself, or for a
/// fusion its fused root (as a source) or the fused parameter `operand` (as
/// a target).
fn dot_endpoint(
    module: &HloModule,
    ids: &HashMap<(u32, u32), String>,
    comp: CompId,
    i: usize,
    operand: Option<usize>,
) -> Option<String> {
    let c = module.computations.get(comp.index())?;
    let instr = c.instructions.get(i)?;
    if let Some(fused) = fused_computation(instr) {
        if let Some(f) = module.computations.get(fused.index()) {
            let inner = match operand {
                None => Some(f.root.index()),
                Some(k) => f
                    .instructions
                    .iter()
                    .position(|x| matches!(x.op, Op::Parameter { number } if number == k)),
            };
            if let Some(inner) = inner {
                if ids.contains_key(&(fused.0, inner as u32)) {
                    return dot_endpoint(module, ids, fused, inner, None);
                }
            }
        }
    }
    ids.get(&(comp.0, i as u32)).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FUSED: &str =
        "HloModule m\n\nf {\n  p0 = f32[8] parameter(0)\n  p1 = f32[8] parameter(1)\n  \
        a = f32[8] add(p0, p1)\n  ROOT e = f32[8] exponential(a)\n}\n\n\
        ENTRY main {\n  x = f32[8] parameter(0)\n  y = f32[8] parameter(1)\n  \
        fu = f32[8] fusion(x, y), kind=kLoop, calls=f\n  ROOT n = f32[8] negate(fu)\n}\n";

    #[test]
    fn layers_put_operands_above_users_and_clusters_hold_their_ops() {
        let module = HloModule::parse(FUSED).unwrap();
        let l = layout(&module, module.entry, 0).unwrap();
        let entry = module.entry();
        let by_name = |n: &str| {
            let i = entry.instructions.iter().position(|x| x.name == n).unwrap();
            &l.nodes[i]
        };
        let (x, fu, neg) = (by_name("x"), by_name("fu"), by_name("n"));
        assert!(x.y + x.h <= fu.y && fu.y + fu.h <= neg.y);
        let NodeKind::Cluster { inner, .. } = &fu.kind else {
            panic!("a fusion is a cluster")
        };
        assert_eq!(inner.nodes.len(), 4);
        assert!(fu.w >= inner.width && fu.h >= inner.height);
        // No two boxes of a layer overlap.
        for a in &l.nodes {
            for b in &l.nodes {
                if a.id != b.id && (a.y - b.y).abs() < 1e-9 {
                    assert!(a.x + a.w <= b.x || b.x + b.w <= a.x);
                }
            }
        }
    }

    #[test]
    fn svg_html_and_dot_hold_every_instruction() {
        let module = HloModule::parse(FUSED).unwrap();
        let svg = to_svg(&module, module.entry).unwrap();
        assert!(svg.starts_with("<svg"));
        for name in ["%x", "%y", "%n", "%p0", "%a", "%e"] {
            assert!(svg.contains(&format!(">{name}<")), "{name} missing");
        }
        assert_eq!(svg.matches("class=\"cluster\"").count(), 1);
        // Edges: x->fu, y->fu (into p0, p1), fu->n, and inside p0,p1->a, a->e.
        assert_eq!(svg.matches("class=\"edge\"").count(), 6);
        let html = to_html(&module, module.entry).unwrap();
        assert!(html.contains("<svg") && html.contains("<script>"));
        let dot = to_dot(&module, module.entry).unwrap();
        assert!(dot.contains("subgraph cluster_"));
        assert_eq!(dot.matches(" -> ").count(), 6);
    }

    #[test]
    fn unknown_computations_are_named() {
        let module = HloModule::parse(FUSED).unwrap();
        let e = pick_computation(&module, Some("nope")).unwrap_err();
        assert!(
            e.message().contains("main") && e.message().contains("f"),
            "{e}"
        );
        assert_eq!(pick_computation(&module, Some("f")).unwrap(), CompId(0));
    }
}
