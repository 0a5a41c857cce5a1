//! Inline SVG charts: domain counts as bars with the global minimum and the
//! `minimum + maxSkew` band, a histogram and a heatmap grouped by an outer domain when
//! there are too many domains for a bar each, verdict groups as one stacked bar, and
//! moves as arrows between domains. Long names are cut in the middle, never at an
//! end, and carry the whole name in a `<title>` (shown on hover).

use crate::page::Esc;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use topospread_jobs::report::summary::summarize;

/// Beyond this many domains a chart draws a histogram (domains per pod count) instead
/// of a bar per domain.
pub(crate) const MAX_BARS: usize = 60;

/// Height of one bar's row.
const ROW: usize = 18;
/// Width of the bars' area.
const BARS_W: usize = 360;
/// Room above the bars for the lines' labels.
const TOP: usize = 30;

/// One constraint's matching pods per domain, as a chart shows them.
pub(crate) struct Counts<'a> {
    /// What the chart shows (the figure's caption).
    pub(crate) caption: &'a str,
    /// Domain and count.
    pub(crate) counts: Vec<(&'a str, i64)>,
    /// The global minimum PodTopologySpread measured the skew from.
    pub(crate) min: Option<i64>,
    /// The constraint's maxSkew: bars above `min + maxSkew` are drawn as over.
    pub(crate) max_skew: Option<i64>,
    /// Each domain's outer domain (a node's zone), to group a heatmap's cells by; the
    /// domains missing from it are grouped together.
    pub(crate) groups: Option<&'a BTreeMap<String, String>>,
}

impl Counts<'_> {
    pub(crate) fn limit(&self) -> Option<i64> {
        Some(self.min? + self.max_skew?)
    }
}

/// The most characters a label shows; longer names are cut in the middle.
pub(crate) const LABEL_CHARS: usize = 33;

/// The width a label of `text` takes, roughly, capped at [`LABEL_CHARS`].
fn label_width(texts: impl Iterator<Item = usize>) -> usize {
    (texts.max().unwrap_or(4).min(LABEL_CHARS) * 7 + 8).clamp(40, 240)
}

/// `name` cut to `max` characters with an ellipsis in the middle
/// (`ip-10-0-1-23.us-…compute.internal`): node names differ at the start (the
/// address) and at the end (pool, suffix), so both ends stay.
pub(crate) fn middle_ellipsis(name: &str, max: usize) -> Cow<'_, str> {
    let n = name.chars().count();
    if n <= max || max < 3 {
        return Cow::Borrowed(name);
    }
    let head = max / 2;
    let tail = max - 1 - head;
    let start: String = name.chars().take(head).collect();
    let end: String = name.chars().skip(n - tail).collect();
    Cow::Owned(format!("{start}\u{2026}{end}"))
}

/// An SVG `<text>` of `name`: cut in the middle past [`LABEL_CHARS`], the whole name in
/// its `<title>`; `attrs` are the element's position and anchor.
fn label(out: &mut String, attrs: &str, name: &str) {
    let shown = middle_ellipsis(name, LABEL_CHARS);
    let _ = write!(
        out,
        "<text {attrs}><title>{}</title>{}</text>",
        Esc(name),
        Esc(&shown)
    );
}

/// A caption placed at `x` on one line: centred, or anchored at the end (start) when
/// centring would run past the right (left) edge of a chart `width` wide.
fn caption_at(out: &mut String, class: &str, x: f64, y: usize, text: &str, width: usize) {
    let half = text.chars().count() as f64 * 3.3;
    let (anchor, x) = if x + half > width as f64 - 2.0 {
        ("end", x.min(width as f64 - 2.0))
    } else if x - half < 2.0 {
        ("start", x.max(2.0))
    } else {
        ("middle", x)
    };
    let _ = write!(
        out,
        "<text class=\"{class}\" x=\"{x:.1}\" y=\"{y}\" text-anchor=\"{anchor}\">{}</text>",
        Esc(text)
    );
}

/// `<figure>` with the counts as bars (or a histogram past [`MAX_BARS`] domains).
pub(crate) fn counts_figure(out: &mut String, c: &Counts<'_>) {
    out.push_str("<figure>");
    if c.counts.len() > MAX_BARS {
        histogram(out, c);
        heatmap(out, c);
    } else {
        bars(out, c);
    }
    let _ = write!(out, "<figcaption>{}", Esc(c.caption));
    if let Some(min) = c.min {
        let _ = write!(out, "; global minimum {min}");
    }
    if let Some(limit) = c.limit() {
        let _ = write!(
            out,
            "; shaded: minimum to minimum + maxSkew = {limit}; red: above it"
        );
    }
    out.push_str("</figcaption></figure>\n");
}

/// The counts as one `<svg>`, without the figure around it (for a page that captions it
/// itself): bars, or a histogram past [`MAX_BARS`] domains.
pub(crate) fn counts_svg(out: &mut String, c: &Counts<'_>) {
    if c.counts.len() > MAX_BARS {
        histogram(out, c);
    } else {
        bars(out, c);
    }
}

fn bars(out: &mut String, c: &Counts<'_>) {
    let label_w = label_width(c.counts.iter().map(|(d, _)| d.chars().count()));
    let limit = c.limit();
    let vmax = c
        .counts
        .iter()
        .map(|x| x.1)
        .chain(limit)
        .max()
        .unwrap_or(0)
        .max(1);
    let x = |v: i64| label_w as f64 + (v.max(0) as f64) * BARS_W as f64 / vmax as f64;
    let width = label_w + BARS_W + 48;
    let height = TOP + ROW * c.counts.len().max(1) + 6;
    let bottom = TOP + ROW * c.counts.len().max(1);
    let _ = write!(
        out,
        "<svg class=\"chart counts\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\"><title>{}</title>",
        Esc(c.caption)
    );
    // The band a domain's count may reach without exceeding maxSkew, under the bars.
    if let (Some(min), Some(limit)) = (c.min, limit) {
        let _ = write!(
            out,
            "<rect class=\"band\" x=\"{bx:.1}\" y=\"{by}\" width=\"{bw:.1}\" height=\"{bh}\"><title>min {min} to min + maxSkew {limit}</title></rect>",
            bx = x(min),
            by = TOP - 4,
            bw = (x(limit) - x(min)).max(1.0),
            bh = bottom - TOP + 4,
        );
    }
    if c.counts.is_empty() {
        let _ = write!(
            out,
            "<text x=\"4\" y=\"{}\">no eligible domain</text>",
            TOP + 12
        );
    }
    for (i, (domain, n)) in c.counts.iter().enumerate() {
        let y = TOP + i * ROW;
        let over = limit.is_some_and(|l| *n > l);
        let class = match (over, *n) {
            (true, _) => "bar over",
            (false, 0) => "bar empty",
            _ => "bar",
        };
        let w = (x(*n) - label_w as f64).max(1.0);
        label(
            out,
            &format!("x=\"{}\" y=\"{}\" text-anchor=\"end\"", label_w - 4, y + 12),
            domain,
        );
        let _ = write!(
            out,
            "<rect class=\"{class}\" x=\"{label_w}\" y=\"{y}\" width=\"{w:.1}\" height=\"{h}\"><title>{d}: {n}</title></rect>\
             <text x=\"{nx:.1}\" y=\"{ty}\">{n}</text>",
            ty = y + 12,
            d = Esc(domain),
            h = ROW - 4,
            nx = x(*n) + 3.0,
        );
    }
    let mut line = |class: &str, v: i64, text: String, dy: usize| {
        let _ = write!(
            out,
            "<line class=\"{class}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y1}\" y2=\"{bottom}\"/>",
            x = x(v),
            y1 = TOP - 4,
        );
        caption_at(out, class, x(v), dy, &text, width);
    };
    if let Some(min) = c.min {
        line("min", min, format!("min {min}"), 11);
    }
    if let Some(limit) = limit {
        line("limit", limit, format!("min + maxSkew = {limit}"), 23);
    }
    out.push_str("</svg>");
}

/// Side of a heatmap cell, in pixels.
const CELL: usize = 10;
/// Heatmap cells per row.
const CELLS_PER_ROW: usize = 80;

/// Too many domains for a bar each: one small cell per domain, coloured by its count
/// (grey: none, blue: darker with more, red: above minimum + maxSkew), grouped by the
/// outer domain, each cell's name and count on hover. 5,000 nodes fit on one screen.
fn heatmap(out: &mut String, c: &Counts<'_>) {
    let mut grouped: BTreeMap<Option<&str>, Vec<(&str, i64)>> = BTreeMap::new();
    for (d, n) in &c.counts {
        let g = c.groups.and_then(|m| m.get(*d)).map(String::as_str);
        grouped.entry(g).or_default().push((d, *n));
    }
    // Domains of a known group first, in the group's order; the rest last.
    let mut order: Vec<_> = grouped.into_iter().collect();
    let ungrouped_first = order.first().is_some_and(|g| g.0.is_none());
    order.rotate_left(usize::from(ungrouped_first));
    let limit = c.limit();
    let vmax = c.counts.iter().map(|x| x.1).max().unwrap_or(0).max(1);
    let width = CELLS_PER_ROW * CELL + 8;
    let head = 16;
    let height = 20
        + order
            .iter()
            .map(|(_, d)| head + d.len().div_ceil(CELLS_PER_ROW) * CELL + 6)
            .sum::<usize>();
    let _ = write!(
        out,
        "<svg class=\"chart heatmap\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\"><title>{}</title>\
         <text x=\"4\" y=\"12\">one cell per domain: grey none, blue darker with more pods (max {vmax}){}</text>",
        Esc(c.caption),
        if limit.is_some() {
            ", red above minimum + maxSkew"
        } else {
            ""
        }
    );
    let mut y = 20;
    for (group, domains) in &order {
        let pods: i64 = domains.iter().map(|d| d.1).sum();
        let name = match (group, c.groups.is_some()) {
            (Some(g), _) => (*g).to_string(),
            (None, true) => "(no outer domain)".to_string(),
            (None, false) => "all domains".to_string(),
        };
        label(
            out,
            &format!("class=\"heat-group\" x=\"4\" y=\"{}\"", y + 12),
            &name,
        );
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\">{} domains, {pods} pods</text>",
            4 + 7 * middle_ellipsis(&name, LABEL_CHARS).chars().count() + 10,
            y + 12,
            domains.len()
        );
        y += head;
        for (i, (d, n)) in domains.iter().enumerate() {
            let fill = if limit.is_some_and(|l| *n > l) {
                "#d0573f".to_string()
            } else if *n <= 0 {
                "#dfe3ea".to_string()
            } else {
                let t = *n as f64 / vmax as f64;
                format!("hsl(215,65%,{:.0}%)", 78.0 - 45.0 * t)
            };
            let _ = write!(
                out,
                "<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{s}\" height=\"{s}\" fill=\"{fill}\"><title>{}: {n}</title></rect>",
                4 + (i % CELLS_PER_ROW) * CELL,
                y + (i / CELLS_PER_ROW) * CELL,
                Esc(d),
                s = CELL - 1,
            );
        }
        y += domains.len().div_ceil(CELLS_PER_ROW) * CELL + 6;
    }
    out.push_str("</svg>");
}

/// Too many domains for a bar each: how many domains hold each pod count.
fn histogram(out: &mut String, c: &Counts<'_>) {
    let counts: Vec<(String, u32)> = c
        .counts
        .iter()
        .map(|(d, n)| ((*d).to_string(), u32::try_from(*n).unwrap_or(0)))
        .collect();
    let summary = summarize(&counts);
    let limit = c.limit();
    let label_w = 110;
    let vmax = summary
        .histogram
        .iter()
        .map(|b| b.domains)
        .max()
        .unwrap_or(1)
        .max(1);
    let width = label_w + BARS_W + 60;
    let height = TOP + ROW * summary.histogram.len().max(1) + 6;
    let _ = write!(
        out,
        "<svg class=\"chart histogram\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\"><title>{}</title>\
         <text x=\"4\" y=\"12\">{} domains: domains per pod count (min {}, max {})</text>",
        Esc(c.caption),
        summary.domains,
        summary.min,
        summary.max
    );
    for (i, b) in summary.histogram.iter().enumerate() {
        let y = TOP + i * ROW;
        let range = if b.low == b.high {
            format!("{} pods", b.low)
        } else {
            format!("{}-{} pods", b.low, b.high)
        };
        let over = limit.is_some_and(|l| i64::from(b.low) > l);
        let w = (b.domains as f64 * BARS_W as f64 / vmax as f64).max(1.0);
        let _ = write!(
            out,
            "<text x=\"{tx}\" y=\"{ty}\" text-anchor=\"end\">{range}</text>\
             <rect class=\"bar{over}\" x=\"{label_w}\" y=\"{y}\" width=\"{w:.1}\" height=\"{h}\"><title>{range}: {d} domains</title></rect>\
             <text x=\"{nx:.1}\" y=\"{ty}\">{d}</text>",
            tx = label_w - 4,
            ty = y + 12,
            over = if over { " over" } else { "" },
            h = ROW - 4,
            d = b.domains,
            nx = label_w as f64 + w + 3.0,
        );
    }
    out.push_str("</svg>");
}

/// Fill colours of the verdict groups: feasible first.
const GROUP_COLOURS: [&str; 8] = [
    "#2e9d5b", "#c94141", "#e08a2c", "#8a5cc2", "#3f8fc9", "#b0467e", "#7d8a2e", "#6b7280",
];

/// The verdict groups (label, nodes, feasible) as one bar split by share, with a
/// legend.
pub(crate) fn groups_bar(out: &mut String, groups: &[(String, usize, bool)]) {
    let total: usize = groups.iter().map(|g| g.1).sum::<usize>().max(1);
    let width = 720.0;
    let legend_h = 18 * groups.len();
    let height = 34 + legend_h;
    let _ = write!(
        out,
        "<svg class=\"chart groups\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\"><title>nodes by Filter verdict</title>"
    );
    let mut x = 0.0;
    let mut colour = 1;
    for (i, (label, n, feasible)) in groups.iter().enumerate() {
        let fill = if *feasible {
            GROUP_COLOURS[0]
        } else {
            let c = GROUP_COLOURS[colour % GROUP_COLOURS.len()];
            colour += 1;
            c
        };
        let w = *n as f64 * width / total as f64;
        let _ = write!(
            out,
            "<rect class=\"group\" x=\"{x:.1}\" y=\"0\" width=\"{w:.1}\" height=\"24\" fill=\"{fill}\"><title>{n}: {l}</title></rect>\
             <rect x=\"0\" y=\"{ly}\" width=\"12\" height=\"12\" fill=\"{fill}\"/><text x=\"18\" y=\"{ty}\">{n} {l}</text>",
            l = Esc(label),
            ly = 32 + 18 * i,
            ty = 42 + 18 * i,
        );
        x += w;
    }
    out.push_str("</svg>\n");
}

/// At most this many domains per side of a moves chart; the rest are drawn as one.
const MAX_MOVE_DOMAINS: usize = 30;

/// Moves between domains (from, to) as arrows from the domains pods leave (left) to
/// the domains their replacements land in (right), one arrow per pair, as thick as
/// its number of moves, in a figure with its caption. A move within one domain changes
/// nothing this key counts: it is not drawn, and the caption says how many there were.
/// `id` keeps the arrowhead marker unique in the page.
pub(crate) fn moves_chart(out: &mut String, id: usize, key: &str, moves: &[(String, String)]) {
    out.push_str("<figure>");
    moves_svg(out, id, key, moves);
    let within = moves.iter().filter(|(from, to)| from == to).count();
    let _ = write!(
        out,
        "<figcaption>{} move(s) between {} domains: from the domain a pod is evicted from to the one its replacement lands in",
        moves.len() - within,
        Esc(key)
    );
    if within > 0 {
        let _ = write!(
            out,
            "; {within} move(s) within one domain, not drawn (they leave its count unchanged)"
        );
    }
    out.push_str("</figcaption></figure>\n");
}

/// [`moves_chart`]'s arrows alone: one `<svg>` element; moves within one domain are
/// left out.
pub(crate) fn moves_svg(out: &mut String, id: usize, key: &str, moves: &[(String, String)]) {
    let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (from, to) in moves.iter().filter(|(from, to)| from != to) {
        *pairs.entry((from.clone(), to.clone())).or_default() += 1;
    }
    if pairs.is_empty() {
        let _ = write!(
            out,
            "<svg class=\"chart moves\" width=\"420\" height=\"24\" viewBox=\"0 0 420 24\" role=\"img\"><title>moves between {k} domains</title><text x=\"0\" y=\"14\">no move between {k} domains</text></svg>",
            k = Esc(key)
        );
        return;
    }
    let side = |pick: fn(&(String, String)) -> &String| -> Vec<String> {
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        for (pair, n) in &pairs {
            *per.entry(pick(pair).clone()).or_default() += n;
        }
        let mut v: Vec<(String, usize)> = per.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut names: Vec<String> = v.into_iter().map(|x| x.0).collect();
        names.truncate(MAX_MOVE_DOMAINS);
        names.sort();
        names
    };
    let lefts = side(|p| &p.0);
    let rights = side(|p| &p.1);
    let other = format!("(other {key} domains)");
    let place = |names: &[String], d: &str| -> usize {
        names.iter().position(|n| n == d).unwrap_or(names.len())
    };
    let mut arrows: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for ((from, to), n) in &pairs {
        *arrows
            .entry((place(&lefts, from), place(&rights, to)))
            .or_default() += n;
    }
    let rows_l = lefts.len() + usize::from(arrows.keys().any(|k| k.0 == lefts.len()));
    let rows_r = rights.len() + usize::from(arrows.keys().any(|k| k.1 == rights.len()));
    let name_of = |names: &[String], i: usize| -> String {
        names.get(i).cloned().unwrap_or_else(|| other.clone())
    };
    let others = rows_l > lefts.len() || rows_r > rights.len();
    let box_w = label_width(
        lefts
            .iter()
            .chain(&rights)
            .map(|d| d.chars().count())
            .chain(others.then(|| other.chars().count())),
    )
    .max(70);
    let gap = 260;
    let width = box_w * 2 + gap;
    let row = 26;
    let height = 28 + row * rows_l.max(rows_r).max(1);
    let heaviest = arrows.values().copied().max().unwrap_or(1).max(1);
    let _ = write!(
        out,
        "<svg class=\"chart moves\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\">\
         <title>moves between {k} domains</title>\
         <defs><marker id=\"arrowhead-{id}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"12\" markerHeight=\"12\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#6b4fb3\"/></marker></defs>\
         <text x=\"0\" y=\"14\">evicted from</text><text x=\"{rx}\" y=\"14\">lands in</text>",
        k = Esc(key),
        rx = box_w + gap,
    );
    let y = |i: usize| 24 + i * row;
    for (i, x, count) in (0..rows_l)
        .map(|i| (i, 0, i))
        .chain((0..rows_r).map(|i| (i, box_w + gap, i + rows_l)))
    {
        let names = if count < rows_l { &lefts } else { &rights };
        let _ = write!(
            out,
            "<rect class=\"domain\" x=\"{x}\" y=\"{y}\" width=\"{box_w}\" height=\"{h}\" rx=\"3\"/>",
            y = y(i),
            h = row - 6,
        );
        label(
            out,
            &format!("x=\"{}\" y=\"{}\"", x + 5, y(i) + 14),
            &name_of(names, i),
        );
    }
    for ((l, r), n) in &arrows {
        let (y1, y2) = (y(*l) + (row - 6) / 2, y(*r) + (row - 6) / 2);
        let stroke = 1.5 + 5.0 * (*n as f64) / heaviest as f64;
        let _ = write!(
            out,
            "<line class=\"move\" x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" stroke-width=\"{stroke:.1}\" marker-end=\"url(#arrowhead-{id})\"><title>{n} move(s): {from} to {to}</title></line>\
             <text x=\"{mx}\" y=\"{my}\" text-anchor=\"middle\">{n}</text>",
            x1 = box_w + 2,
            x2 = box_w + gap - 4,
            from = Esc(&name_of(&lefts, *l)),
            to = Esc(&name_of(&rights, *r)),
            // A third of the way along: arrows from different domains that cross
            // mid-way keep their numbers apart.
            mx = box_w + gap / 3,
            my = (2 * y1 + y2) / 3 - 4,
        );
    }
    out.push_str("</svg>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(haystack: &str, needle: &str) -> usize {
        haystack.matches(needle).count()
    }

    #[test]
    fn a_bar_per_domain_with_the_minimum_and_the_maxskew_line() {
        let mut out = String::new();
        counts_figure(
            &mut out,
            &Counts {
                caption: "zone after",
                counts: vec![("a", 3), ("b", 1), ("<c>", 0)],
                min: Some(0),
                max_skew: Some(1),
                groups: None,
            },
        );
        assert_eq!(count(&out, "<rect class=\"bar"), 3, "{out}");
        assert_eq!(count(&out, "<rect class=\"bar over\""), 1, "{out}");
        assert_eq!(count(&out, "<rect class=\"bar empty\""), 1, "{out}");
        assert_eq!(count(&out, "<line class=\"min\""), 1, "{out}");
        assert_eq!(count(&out, "<line class=\"limit\""), 1, "{out}");
        assert!(out.contains("&lt;c&gt;"), "{out}");
        assert!(!out.contains("<c>"), "{out}");
        assert!(out.contains("global minimum 0; shaded: minimum to minimum + maxSkew = 1"));
        // The band from the minimum to minimum + maxSkew, under the bars.
        assert_eq!(count(&out, "<rect class=\"band\""), 1, "{out}");
        assert!(
            out.find("class=\"band\"") < out.find("class=\"bar"),
            "{out}"
        );
    }

    #[test]
    fn many_domains_become_a_histogram() {
        let names: Vec<String> = (0..500).map(|i| format!("node-{i}")).collect();
        let counts = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i64::from(i % 3 == 0)))
            .collect();
        let mut out = String::new();
        counts_figure(
            &mut out,
            &Counts {
                caption: "hostname",
                counts,
                min: Some(0),
                max_skew: Some(1),
                groups: None,
            },
        );
        assert!(out.contains("class=\"chart histogram\""), "{out}");
        assert_eq!(count(&out, "<rect class=\"bar"), 2, "{out}");
        assert!(out.contains("0 pods: 333 domains"), "{out}");
        assert!(out.contains("1 pods: 167 domains"), "{out}");
        // And every domain as a heatmap cell, one group when no zone is known.
        assert_eq!(count(&out, "<rect class=\"cell\""), 500, "{out}");
        assert!(out.contains("<title>node-3: 1</title>"), "{out}");
        assert!(out.contains("500 domains, 167 pods"), "{out}");
    }

    #[test]
    fn a_heatmap_groups_its_cells_by_zone() {
        let names: Vec<String> = (0..5000).map(|i| format!("node-{i}")).collect();
        let zones: BTreeMap<String, String> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 10 != 9)
            .map(|(i, n)| (n.clone(), format!("zone-{}", i % 3)))
            .collect();
        let counts = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i64::try_from(i % 4).unwrap_or(0)))
            .collect();
        let mut out = String::new();
        counts_figure(
            &mut out,
            &Counts {
                caption: "hostname",
                counts,
                min: Some(0),
                max_skew: Some(2),
                groups: Some(&zones),
            },
        );
        assert_eq!(count(&out, "<rect class=\"cell\""), 5000);
        let at = |s: &str| out.find(s).unwrap_or(usize::MAX);
        // Zones in order, the nodes without one last.
        assert!(at(">zone-0</text>") < at(">zone-1</text>"), "{out}");
        assert!(
            at(">zone-2</text>") < at(">(no outer domain)</text>"),
            "{out}"
        );
        assert!(out.contains("500 domains, "), "{out}");
        // Count 3 is above min + maxSkew = 2: red.
        assert!(
            out.contains("fill=\"#d0573f\"><title>node-3: 3</title>"),
            "{out}"
        );
        assert!(out.len() < 600 * 1024, "{} bytes", out.len());
    }

    #[test]
    fn long_names_are_cut_in_the_middle_with_the_whole_name_on_hover() {
        let long = "ip-10-0-1-23.us-west-2.compute.internal";
        assert_eq!(
            middle_ellipsis(long, 33),
            "ip-10-0-1-23.us-\u{2026}compute.internal"
        );
        assert_eq!(middle_ellipsis("short", 33), "short");
        let mut out = String::new();
        counts_figure(
            &mut out,
            &Counts {
                caption: "hostname",
                counts: vec![(long, 1), ("b", 9)],
                min: Some(1),
                max_skew: Some(8),
                groups: None,
            },
        );
        assert!(
            out.contains(&format!("<title>{long}</title>ip-10-0-1-23.us-\u{2026}")),
            "{out}"
        );
        // The caption at the right edge ends there instead of running past it.
        assert!(
            out.contains("text-anchor=\"end\">min + maxSkew = 9</text>"),
            "{out}"
        );
    }

    #[test]
    fn moves_are_arrows_between_domains_summed_per_pair() {
        let m = |a: &str, b: &str| (a.to_string(), b.to_string());
        let mut out = String::new();
        moves_chart(
            &mut out,
            7,
            "zone",
            &[m("a", "b"), m("a", "b"), m("a", "c"), m("<x>", "c")],
        );
        assert_eq!(count(&out, "<line class=\"move\""), 3, "{out}");
        assert!(out.contains("4 move(s) between zone domains"), "{out}");
        assert_eq!(count(&out, "<rect class=\"domain\""), 4, "{out}");
        assert!(out.contains("<title>2 move(s): a to b</title>"), "{out}");
        assert!(out.contains("marker-end=\"url(#arrowhead-7)\""), "{out}");
        assert!(out.contains("&lt;x&gt;"), "{out}");
        // The arrows alone are the figure's `<svg>`, for a page that embeds them.
        let mut svg = String::new();
        moves_svg(
            &mut svg,
            7,
            "zone",
            &[m("a", "b"), m("a", "b"), m("a", "c"), m("<x>", "c")],
        );
        assert!(svg.starts_with("<svg class=\"chart moves\"") && svg.ends_with("</svg>"));
        assert!(out.starts_with(&format!("<figure>{svg}<figcaption>4 move(s) between zone")));
    }

    #[test]
    fn moves_within_one_domain_are_not_drawn() {
        let m = |a: &str, b: &str| (a.to_string(), b.to_string());
        let mut out = String::new();
        moves_chart(
            &mut out,
            1,
            "zone",
            &[m("a", "a"), m("a", "b"), m("b", "b")],
        );
        assert_eq!(count(&out, "<line class=\"move\""), 1, "{out}");
        assert!(!out.contains("a to a") && !out.contains("b to b"), "{out}");
        assert!(out.contains("1 move(s) between zone domains"), "{out}");
        assert!(
            out.contains("2 move(s) within one domain, not drawn"),
            "{out}"
        );
        let mut none = String::new();
        moves_chart(&mut none, 2, "zone", &[m("a", "a")]);
        assert_eq!(count(&none, "<line class=\"move\""), 0, "{none}");
        assert!(none.contains("no move between zone domains"), "{none}");
    }

    #[test]
    fn groups_share_one_bar() {
        let mut out = String::new();
        groups_bar(
            &mut out,
            &[
                ("feasible".into(), 3, true),
                ("Insufficient cpu".into(), 1, false),
            ],
        );
        assert_eq!(count(&out, "<rect class=\"group\""), 2, "{out}");
        assert!(out.contains("width=\"540.0\""), "{out}");
    }
}
