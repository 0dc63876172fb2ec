-- The tables ledger.toml watches.
CREATE TABLE account (
    id      integer       PRIMARY KEY,
    owner   text          NOT NULL,
    balance numeric(14,2) NOT NULL DEFAULT 0
);
CREATE TABLE entry (
    account_id integer       NOT NULL,
    posting_id bigint        NOT NULL,
    line       integer       NOT NULL,
    amount     numeric(14,2) NOT NULL,
    posted_at  timestamptz   NOT NULL DEFAULT now()
);
CREATE INDEX ON entry (account_id);
