mod envelope;
mod schema_drift;
