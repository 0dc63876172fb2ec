-- The tables coupons.toml watches.
CREATE TABLE coupon (
    code     text    PRIMARY KEY,
    max_uses integer NOT NULL
);
CREATE TABLE redemption (
    id       bigserial PRIMARY KEY,
    code     text      NOT NULL REFERENCES coupon,
    fan      text      NOT NULL,
    refunded boolean   NOT NULL DEFAULT false
);
CREATE INDEX ON redemption (code);
