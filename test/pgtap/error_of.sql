-- Included (\ir) by the pgTAP files: the error a statement raises, as
-- SQLSTATE, message, detail and hint ('00000' and nulls if it raises none).
CREATE FUNCTION pg_temp.error_of(statement text, OUT state text, OUT message text,
                                 OUT detail text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    state := '00000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                            detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
END $$;
