//! The module-cycle check and its ratchet, `allowed-cycles.txt`.
//!
//! The allowlist names edges, one per line: `target: from -> to` (`pi-daemon: store -> state`),
//! `#` starts a comment. The check fails on every edge inside a cycle that is not listed, and
//! on every listed edge that is no longer inside a cycle, so the list can only shrink.

use std::collections::BTreeSet;
use std::fmt;

use crate::TidyError;
use crate::graph::cyclic_components;
use crate::modules::{ModuleGraph, Site};

/// Edges that may still close a cycle.
#[derive(Debug, Default)]
pub struct Allowlist {
    edges: BTreeSet<AllowedEdge>,
}

/// `target: from -> to`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AllowedEdge {
    pub target: String,
    pub from: String,
    pub to: String,
}

impl fmt::Display for AllowedEdge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} -> {}", self.target, self.from, self.to)
    }
}

impl Allowlist {
    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<Allowlist, TidyError> {
        let mut edges = BTreeSet::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let malformed = || TidyError::Allowlist {
                line: number + 1,
                message: format!("expected `target: from -> to`, found `{line}`"),
            };
            let (target, edge) = line.split_once(':').ok_or_else(malformed)?;
            let (from, to) = edge.split_once("->").ok_or_else(malformed)?;
            let edge = AllowedEdge {
                target: target.trim().to_string(),
                from: from.trim().to_string(),
                to: to.trim().to_string(),
            };
            if !edges.insert(edge) {
                return Err(TidyError::Allowlist {
                    line: number + 1,
                    message: format!("`{line}` is listed twice"),
                });
            }
        }
        Ok(Allowlist { edges })
    }

    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }
}

/// What the check found. Empty when the crates are as the allowlist says.
#[derive(Debug, Default)]
pub struct CycleReport {
    /// Cycles with at least one edge the allowlist does not name.
    pub cycles: Vec<Cycle>,
    /// Listed edges that no longer close a cycle.
    pub stale: Vec<AllowedEdge>,
}

/// One set of modules that import each other.
#[derive(Debug)]
pub struct Cycle {
    pub target: String,
    pub modules: BTreeSet<String>,
    /// Every edge inside the component, with its sites and whether the allowlist names it.
    pub edges: Vec<(String, String, Vec<Site>, bool)>,
}

impl CycleReport {
    pub fn is_clean(&self) -> bool {
        self.cycles.is_empty() && self.stale.is_empty()
    }
}

/// Checks the graphs of the targets (`(target name, graph)`) against `allowlist`.
pub fn check_cycles(graphs: &[(String, ModuleGraph)], allowlist: &Allowlist) -> CycleReport {
    let mut report = CycleReport::default();
    let mut in_cycles = BTreeSet::new();
    for (target, graph) in graphs {
        for modules in cyclic_components(graph) {
            let mut edges = Vec::new();
            let mut unlisted = false;
            for ((from, to), sites) in &graph.edges {
                if !(modules.contains(from) && modules.contains(to)) {
                    continue;
                }
                let edge = AllowedEdge {
                    target: target.clone(),
                    from: from.clone(),
                    to: to.clone(),
                };
                let allowed = allowlist.edges.contains(&edge);
                unlisted |= !allowed;
                in_cycles.insert(edge);
                edges.push((from.clone(), to.clone(), sites.clone(), allowed));
            }
            if unlisted {
                report.cycles.push(Cycle {
                    target: target.clone(),
                    modules,
                    edges,
                });
            }
        }
    }
    report.stale = allowlist.edges.difference(&in_cycles).cloned().collect();
    report
}

impl fmt::Display for CycleReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for cycle in &self.cycles {
            let modules: Vec<&str> = cycle.modules.iter().map(String::as_str).collect();
            writeln!(
                f,
                "{}: the modules {{{}}} import each other; break one of the new edges:",
                cycle.target,
                modules.join(", ")
            )?;
            for (from, to, sites, allowed) in &cycle.edges {
                let mark = if *allowed { "allowed" } else { "new" };
                writeln!(f, "  {from} -> {to} ({mark})")?;
                for site in sites {
                    writeln!(f, "    {site}")?;
                }
            }
        }
        for edge in &self.stale {
            writeln!(
                f,
                "{edge} no longer closes a cycle; remove it from allowed-cycles.txt"
            )?;
        }
        Ok(())
    }
}
