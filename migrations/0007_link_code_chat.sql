-- Where a link code was given: the issuing account is told there when the code is redeemed.
ALTER TABLE link_codes ADD COLUMN chat jsonb;
