//! The page around every report: escaping, the document shell, its style and the
//! table-sorting script.

use std::fmt::{self, Write as _};

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by entities: safe in element
/// content and in quoted attribute values.
pub fn escape(text: &str) -> String {
    Esc(text).to_string()
}

/// Formats its string escaped, for `format!` arguments.
pub(crate) struct Esc<'a>(pub(crate) &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut start = 0;
        for (i, c) in self.0.char_indices() {
            let entity = match c {
                '&' => "&amp;",
                '<' => "&lt;",
                '>' => "&gt;",
                '"' => "&quot;",
                '\'' => "&#39;",
                _ => continue,
            };
            f.write_str(&self.0[start..i])?;
            f.write_str(entity)?;
            start = i + c.len_utf8();
        }
        f.write_str(&self.0[start..])
    }
}

const STYLE: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2433;background:#f7f8fa}
header{background:#1d2b4f;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;opacity:.85}
main{padding:8px 24px 32px;max-width:1400px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:10px 16px;margin:14px 0}
h2{font-size:17px;margin:6px 0 8px}
h3{font-size:14px;margin:12px 0 6px}
.ok{color:#17663a}.bad{color:#a12222}.muted{color:#5b6475}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
table{border-collapse:collapse;margin:6px 0}
th,td{border-bottom:1px solid #e6e9ef;padding:3px 10px;text-align:left;vertical-align:top}
th{background:#eef1f6;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:after{content:' \\2195';color:#98a1b3}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.feasible td:first-child{border-left:3px solid #2e9d5b}
tr.rejected td:first-child{border-left:3px solid #c94141}
tr.chosen{background:#e7f6ec}
.pair{display:flex;flex-wrap:wrap;gap:18px}
.pair figure{margin:0}
figcaption{font-size:12.5px;color:#5b6475}
svg{font:11px system-ui,sans-serif;background:#fff}
svg .bar{fill:#4a78c2}svg .bar.over{fill:#d0573f}svg .bar.empty{fill:#c9d1de}
svg .band{fill:#2e9d5b;fill-opacity:.13}
svg .cell:hover{stroke:#1d2433}
svg line.min{stroke:#2e9d5b;stroke-width:1.5}
svg line.limit{stroke:#d0573f;stroke-width:1.5;stroke-dasharray:5 3}
svg .move{stroke:#6b4fb3;fill:none}
svg .domain{fill:#eef1f6;stroke:#98a1b3}
svg .group{stroke:#fff}
ul.reasons{margin:4px 0;padding-left:20px}
";

/// Sorts a `table.sortable` by the clicked column: numerically by each cell's
/// `data-v` when it has one, else by its text (each key read once, so 5,000 rows sort
/// at once); a second click reverses.
const SCRIPT: &str = "\
document.querySelectorAll('table.sortable').forEach(function(t){
t.tHead.addEventListener('click',function(e){var th=e.target.closest('th');if(!th)return;
var i=th.cellIndex,d=th.dataset.dir==='asc'?-1:1;th.dataset.dir=d>0?'asc':'desc';
var b=t.tBodies[0],rows=Array.prototype.map.call(b.rows,function(r){var c=r.cells[i],v=c&&c.getAttribute('data-v');
return [v===null||v===undefined?(c?c.textContent:''):parseFloat(v),r];});
rows.sort(function(x,y){var a=x[0],c=y[0];return (typeof a==='number'&&typeof c==='number'?a-c:String(a).localeCompare(String(c)))*d;});
var f=document.createDocumentFragment();rows.forEach(function(p){f.appendChild(p[1]);});b.appendChild(f);});});
";

/// One HTML document being written.
pub(crate) struct Page {
    out: String,
    sortable: bool,
}

impl Page {
    /// A page titled `title`, its header saying `subtitle`.
    pub(crate) fn new(title: &str, subtitle: &str) -> Self {
        let mut out = String::with_capacity(64 * 1024);
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
             <header><h1>{title}</h1><p>{subtitle}</p></header>\n<main>\n",
            title = Esc(title),
            subtitle = Esc(subtitle),
        );
        Self {
            out,
            sortable: false,
        }
    }

    /// The buffer, to write markup into.
    pub(crate) fn html(&mut self) -> &mut String {
        &mut self.out
    }

    /// Opens a `table.sortable` with these headers (`num` ones right-aligned), and
    /// makes the page carry the sorting script.
    pub(crate) fn sortable_table(&mut self, id: &str, headers: &[(&str, bool)]) {
        self.sortable = true;
        let _ = write!(
            self.out,
            "<table class=\"sortable\" id=\"{}\"><thead><tr>",
            Esc(id)
        );
        for (h, num) in headers {
            let class = if *num { " class=\"num\"" } else { "" };
            let _ = write!(self.out, "<th{class}>{}</th>", Esc(h));
        }
        self.out.push_str("</tr></thead>\n<tbody>\n");
    }

    /// The finished document.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str("</main>\n");
        if self.sortable {
            let _ = write!(self.out, "<script>\n{SCRIPT}</script>\n");
        }
        self.out.push_str("</body>\n</html>\n");
        self.out
    }
}

/// `<ul>` of escaped lines, or nothing when empty; under an `<h2>` heading.
pub(crate) fn list_section(out: &mut String, heading: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section><h2>{}</h2><ul class=\"reasons\">",
        Esc(heading)
    );
    for l in lines {
        let _ = write!(out, "<li>{}</li>", Esc(l));
    }
    out.push_str("</ul></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_both_quotes() {
        let nasty = "<script>alert('x')</script> & \"q\"";
        let want = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;";
        assert_eq!(escape(nasty), want);
        assert_eq!(Esc(nasty).to_string(), want);
        assert_eq!(Esc("zone-a été").to_string(), "zone-a été");
    }

    #[test]
    fn the_script_comes_only_with_a_sortable_table() {
        let plain = Page::new("t", "s").finish();
        assert!(!plain.contains("<script"));
        let mut page = Page::new("t", "s");
        page.sortable_table("nodes", &[("Node", false), ("Total", true)]);
        page.html().push_str("</tbody></table>");
        let html = page.finish();
        assert!(html.contains("<script>"), "{html}");
        assert!(html.contains("<th class=\"num\">Total</th>"), "{html}");
        assert!(html.ends_with("</html>\n"));
    }
}
