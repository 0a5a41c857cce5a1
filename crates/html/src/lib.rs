//! topospread's reports as one self-contained HTML page each: inline CSS, inline SVG
//! charts and a few lines of script to sort tables; no URL is fetched, so the file can
//! be attached to a pull request or an incident and opened anywhere. Each page is
//! rendered from the typed report `-o json` writes, never recomputed; every string
//! from the input is HTML-escaped.

mod capacity;
mod chart;
mod explain;
mod page;
mod rebalance;
mod simulate;

pub use capacity::{CapacityFigure, capacity, capacity_figures};
pub use explain::explain;
pub use page::escape;
pub use rebalance::{MovesChart, moves_charts, rebalance, scale_down};
pub use simulate::simulate;
