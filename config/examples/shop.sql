-- The tables shop.toml watches.
CREATE TABLE product (
    id    integer PRIMARY KEY,
    name  text    NOT NULL,
    stock integer NOT NULL
);
CREATE TABLE order_line (
    id         bigserial PRIMARY KEY,
    order_id   bigint    NOT NULL,
    product_id integer   NOT NULL,
    quantity   integer   NOT NULL CHECK (quantity > 0),
    state      text      NOT NULL DEFAULT 'open'
);
CREATE INDEX ON order_line (product_id);
