//! Strongly connected components (Tarjan) of a module graph: the sets of modules that reach
//! each other, which is what a cycle of imports is.

use std::collections::{BTreeMap, BTreeSet};

use crate::modules::ModuleGraph;

/// The components of `graph` with more than one module, each sorted, in the order of their
/// smallest module.
pub fn cyclic_components(graph: &ModuleGraph) -> Vec<BTreeSet<String>> {
    let mut successors: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in graph.edges.keys() {
        successors.entry(from).or_default().push(to);
    }
    let mut tarjan = Tarjan {
        successors: &successors,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next_index: 0,
        components: Vec::new(),
    };
    for module in &graph.modules {
        if !tarjan.index.contains_key(module.as_str()) {
            tarjan.visit(module);
        }
    }
    let mut components: Vec<BTreeSet<String>> = tarjan
        .components
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| component.into_iter().map(str::to_string).collect())
        .collect();
    components.sort();
    components
}

struct Tarjan<'a> {
    successors: &'a BTreeMap<&'a str, Vec<&'a str>>,
    index: BTreeMap<&'a str, usize>,
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    next_index: usize,
    components: Vec<Vec<&'a str>>,
}

impl<'a> Tarjan<'a> {
    // Recursive: a crate has tens of top-level modules, not thousands.
    fn visit(&mut self, module: &'a str) {
        self.index.insert(module, self.next_index);
        self.low.insert(module, self.next_index);
        self.next_index += 1;
        self.stack.push(module);
        self.on_stack.insert(module);
        let successors = self.successors.get(module).cloned().unwrap_or_default();
        for next in successors {
            if !self.index.contains_key(next) {
                self.visit(next);
                let low = self.low[module].min(self.low[next]);
                self.low.insert(module, low);
            } else if self.on_stack.contains(next) {
                let low = self.low[module].min(self.index[next]);
                self.low.insert(module, low);
            }
        }
        if self.low[module] == self.index[module] {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack.remove(member);
                component.push(member);
                if member == module {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}
