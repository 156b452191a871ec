mod time;
mod wildcard;
