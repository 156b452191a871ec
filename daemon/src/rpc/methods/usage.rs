//! `usage/stats`: the usage ledger summed by model and by day.

use pi_protocol::ErrorObject;
use pi_protocol::v1::{
    DayUsage, ModelUsage, ProjectUsage, TokenTotals, UsageStatsParams, UsageStatsResponse,
    UsageTotals,
};

use crate::rpc::dispatch::RequestContext;
use crate::store::UsageRow;

/// Sums stored assistant messages' usage by model and by day.
pub async fn stats(
    context: &RequestContext,
    params: UsageStatsParams,
) -> Result<UsageStatsResponse, ErrorObject> {
    let rows = context
        .state
        .store
        .usage(params.since)
        .await
        .map_err(crate::rpc::errors::storage(&context.state.store))?;
    Ok(summarize(&rows))
}

/// Groups per-model-per-day-per-directory rows into per-model, per-day, per-project and total
/// sums.
pub fn summarize(rows: &[UsageRow]) -> UsageStatsResponse {
    let mut by_model: Vec<ModelUsage> = Vec::new();
    let mut by_day: Vec<DayUsage> = Vec::new();
    let mut by_project: Vec<ProjectUsage> = Vec::new();
    let mut total = UsageTotals::default();
    for row in rows {
        let sums = totals(row);
        match by_model
            .iter_mut()
            .find(|entry| entry.provider == row.provider && entry.model == row.model)
        {
            Some(entry) => add(&mut entry.usage, &sums),
            None => by_model.push(ModelUsage {
                provider: row.provider.clone(),
                model: row.model.clone(),
                usage: sums,
            }),
        }
        match by_day.iter_mut().find(|entry| entry.day == row.day) {
            Some(entry) => add(&mut entry.usage, &sums),
            None => by_day.push(DayUsage {
                day: row.day.clone(),
                usage: sums,
            }),
        }
        match by_project.iter_mut().find(|entry| entry.cwd == row.cwd) {
            Some(entry) => add(&mut entry.usage, &sums),
            None => by_project.push(ProjectUsage {
                cwd: row.cwd.clone(),
                usage: sums,
            }),
        }
        add(&mut total, &sums);
    }
    by_project.sort_by(|a, b| {
        b.usage
            .cost
            .total_cmp(&a.usage.cost)
            .then_with(|| a.cwd.cmp(&b.cwd))
    });
    by_model.sort_by(|a, b| {
        b.usage
            .cost
            .total_cmp(&a.usage.cost)
            .then_with(|| (&a.provider, &a.model).cmp(&(&b.provider, &b.model)))
    });
    UsageStatsResponse {
        by_model,
        by_day,
        by_project,
        total,
    }
}

fn totals(row: &UsageRow) -> UsageTotals {
    UsageTotals {
        messages: row.messages,
        tokens: TokenTotals {
            input: row.input,
            output: row.output,
            cache_read: row.cache_read,
            cache_write: row.cache_write,
            total: row.input + row.output + row.cache_read + row.cache_write,
        },
        cost: row.cost,
    }
}

fn add(sum: &mut UsageTotals, more: &UsageTotals) {
    sum.messages += more.messages;
    sum.tokens.input += more.tokens.input;
    sum.tokens.output += more.tokens.output;
    sum.tokens.cache_read += more.tokens.cache_read;
    sum.tokens.cache_write += more.tokens.cache_write;
    sum.tokens.total += more.tokens.total;
    sum.cost += more.cost;
}
