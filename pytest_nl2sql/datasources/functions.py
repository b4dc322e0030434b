"""The functions a query may call, per dialect: an allow-list of functions known to be pure.

A function that is not listed here is refused by the statement guard (and, on SQLite, by
the connection's authorizer), whatever it is called: the guard resolves a call's name
first (quoting, case and a ``pg_catalog.`` / ``main.`` qualifier are normalised away;
any other schema qualifier is refused), then looks the name up with
``allowed_functions(dialect)``.

"Pure" means the function computes its result from its arguments and the rows of the
query alone: math, string, date/time, aggregate, window and conditional functions, casts,
and functions that *read* JSON or arrays. Functions that read files, sessions, settings,
sequences, other servers, the catalog or the server's own state, or that sleep, lock or
signal, are not listed.

Names are lowercase. On SQLite they are spelt exactly as SQLite's authorizer reports them
(``SQLITE_FUNCTION``), which includes the operators that SQLite runs as functions
(``like``, ``glob``, ``->``, ``->>``). Table-valued functions that may appear in ``FROM``
are listed too (``json_each`` on SQLite, ``generate_series`` / ``unnest`` on PostgreSQL).
"""

from __future__ import annotations

__all__ = ["allowed_functions", "table_functions"]


def _words(text: str) -> frozenset[str]:
    return frozenset(word.lower() for word in text.split())


# Functions every engine we support knows under these names, with the same pure meaning.
_GENERIC = _words(
    """
    abs avg ceil ceiling coalesce count floor length lower ltrim max min mod nullif power
    replace round rtrim substr substring sum trim upper
    cast extract position char_length character_length octet_length
    current_date current_time current_timestamp
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value
    nth_value
    """
)

# SQLite: core scalar, aggregate, window, date/time, math and json1 functions, as the
# authorizer names them. Not listed: load_extension, readfile, writefile, edit, fsdir,
# zipfile, fts3_tokenizer, fts5*, the sqlite_* introspection functions, changes /
# total_changes / last_insert_rowid (connection state), randomblob / zeroblob (unbounded
# allocations), and the rtree / fts helpers.
_SQLITE = _words(
    """
    abs acos acosh asin asinh atan atan2 atanh avg ceil ceiling char coalesce concat
    concat_ws cos cosh count cume_dist current_date current_time current_timestamp date
    datetime degrees dense_rank exp first_value floor format glob group_concat hex ifnull
    iif if instr julianday lag last_value lead length like likelihood likely ln log log10
    log2 lower ltrim max median min mod nth_value ntile nullif octet_length percent_rank pi
    pow power printf quote radians random rank replace round row_number rtrim sign sin
    sinh soundex sqrt strftime string_agg substr substring sum tan tanh time timediff total
    trim trunc typeof unhex unicode unistr unixepoch unlikely upper
    json json_array json_array_length json_extract json_group_array json_group_object
    json_insert json_object json_patch json_quote json_remove json_replace json_set
    json_type json_valid json_error_position json_pretty json_each json_tree
    jsonb jsonb_array jsonb_extract jsonb_group_array jsonb_group_object jsonb_insert
    jsonb_object jsonb_patch jsonb_remove jsonb_replace jsonb_set
    -> ->>
    """
)

# PostgreSQL: math, string, date/time, aggregates, window functions, conditionals, casts
# written as calls, and functions that read JSON, arrays and ranges. Not listed: anything
# pg_* (files, backends, locks, stats, settings), dblink*, lo_*, set_config /
# current_setting, nextval / setval / currval, txid_* / pg_current_xact_id, *_to_xml,
# version(), current_user and the other session functions.
_POSTGRESQL = _words(
    """
    abs cbrt ceil ceiling degrees div exp factorial floor gcd lcm ln log log10 min_scale
    mod pi power radians random round scale sign sqrt trim_scale trunc width_bucket
    acos acosd asin asind atan atan2 atan2d atand cos cosd cot cotd sin sind tan tand
    sinh cosh tanh asinh acosh atanh erf erfc
    ascii bit_length btrim char_length character_length chr concat concat_ws format
    initcap left length lower lpad ltrim md5 normalize octet_length overlay position
    quote_ident quote_literal quote_nullable regexp_count regexp_instr regexp_like
    regexp_match regexp_matches regexp_replace regexp_split_to_array
    regexp_split_to_table regexp_substr repeat replace reverse right rpad rtrim split_part
    starts_with string_to_array string_to_table strpos substr substring to_hex translate
    trim upper unistr encode decode sha224 sha256 sha384 sha512 get_bit get_byte
    bit_count
    age clock_timestamp current_date current_time current_timestamp date_add date_bin
    date_part date_subtract date_trunc extract isfinite justify_days justify_hours
    justify_interval localtime localtimestamp make_date make_interval make_time
    make_timestamp make_timestamptz now statement_timestamp transaction_timestamp
    to_timestamp to_char to_date to_number timezone
    array_agg avg bit_and bit_or bit_xor bool_and bool_or count every json_agg
    json_agg_strict jsonb_agg jsonb_agg_strict json_object_agg jsonb_object_agg max min
    string_agg sum corr covar_pop covar_samp regr_avgx regr_avgy regr_count
    regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy stddev stddev_pop
    stddev_samp variance var_pop var_samp mode percentile_cont percentile_disc grouping
    any_value
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value
    last_value nth_value
    coalesce nullif greatest least num_nulls num_nonnulls
    cast row
    bool boolean int int2 int4 int8 integer smallint bigint float4 float8 real numeric
    decimal text varchar char bpchar date time timestamp timestamptz interval
    to_json to_jsonb row_to_json array_to_json json_build_array json_build_object
    jsonb_build_array jsonb_build_object json_object jsonb_object json_array_length
    jsonb_array_length json_array_elements json_array_elements_text
    jsonb_array_elements jsonb_array_elements_text json_each json_each_text jsonb_each
    jsonb_each_text json_extract_path json_extract_path_text jsonb_extract_path
    jsonb_extract_path_text json_object_keys jsonb_object_keys json_typeof jsonb_typeof
    json_strip_nulls jsonb_strip_nulls jsonb_pretty jsonb_path_exists jsonb_path_match
    jsonb_path_query jsonb_path_query_array jsonb_path_query_first jsonb_set
    jsonb_insert jsonb_set_lax jsonb_concat json_scalar json_serialize
    array_append array_cat array_dims array_fill array_length array_lower array_ndims
    array_position array_positions array_prepend array_remove array_replace
    array_to_string array_upper cardinality trim_array unnest generate_series
    generate_subscripts
    lower_inc upper_inc lower_inf upper_inf isempty range_merge
    """
)

# DuckDB: the pure scalar, aggregate, window, list/struct/map and json functions. Not
# listed: read_* / *_scan / glob / parquet_* (files), duckdb_* / pragma_* / which_secret
# (catalog and settings), getenv, current_setting, nextval / currval / setval, query /
# query_table, install / load, sqlite_* / postgres_* / mysql_* (other databases).
_DUCKDB = _words(
    """
    abs acos asin atan atan2 avg bit_count cbrt ceil ceiling cos cot degrees even exp
    factorial floor gamma gcd greatest isfinite isinf isnan lcm least lgamma ln log log10
    log2 mod nextafter pi pow power radians random round round_even sign signbit sin sqrt
    tan trunc xor
    array_to_string ascii bar bit_length char_length character_length chr concat
    concat_ws contains ends_with format hash initcap instr lcase left len length
    length_grapheme levenshtein like_escape lower lpad ltrim md5 md5_number nfc_normalize
    not_like_escape octet_length ord position prefix printf regexp_escape
    regexp_extract regexp_extract_all regexp_full_match regexp_matches regexp_replace
    regexp_split_to_array regexp_split_to_table repeat replace reverse right rpad rtrim
    sha1 sha256 split split_part starts_with str_split str_split_regex string_split
    string_split_regex string_to_array strip_accents strlen strpos substr substring
    substring_grapheme suffix translate trim ucase unicode upper editdist3 hamming
    jaccard jaro_similarity jaro_winkler_similarity damerau_levenshtein mismatches
    age century current_date current_time current_timestamp date_add date_diff date_part
    date_sub date_trunc datediff datepart datesub datetrunc day dayname dayofmonth
    dayofweek dayofyear decade epoch epoch_ms epoch_ns epoch_us era extract hour
    isodow isoyear julian last_day make_date make_time make_timestamp make_timestamptz
    microsecond millennium millisecond minute month monthname nanosecond now quarter
    second strftime strptime time_bucket timezone timezone_hour timezone_minute
    to_days to_hours to_microseconds to_milliseconds to_minutes to_months to_seconds
    to_timestamp to_weeks to_years today try_strptime week weekday weekofyear year
    yearweek get_current_time get_current_timestamp localtime localtimestamp
    transaction_timestamp
    any_value approx_count_distinct approx_quantile arbitrary arg_max arg_max_null
    arg_min arg_min_null argmax argmin array_agg avg bit_and bit_or bit_xor bool_and
    bool_or count count_if count_star countif corr covar_pop covar_samp entropy favg
    first fsum geomean geometric_mean group_concat histogram kahan_sum kurtosis
    kurtosis_pop last list listagg mad max max_by mean median min min_by mode product
    quantile quantile_cont quantile_disc regr_avgx regr_avgy regr_count regr_intercept
    regr_r2 regr_slope regr_sxx regr_sxy regr_syy sem skewness stddev stddev_pop
    stddev_samp string_agg sum sum_no_overflow sumkahan var_pop var_samp variance
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value
    last_value nth_value
    coalesce ifnull nullif if iif typeof cast try_cast
    array_length array_extract array_contains array_position array_append array_prepend
    array_concat array_cat array_slice array_sort array_reverse_sort array_distinct
    array_unique array_value array_has array_has_all array_has_any array_select
    array_where array_zip array_filter array_transform array_apply array_reduce
    cardinality element_at flatten generate_series range list_aggregate list_aggr
    list_any_value list_append list_apply list_concat list_contains list_count
    list_distinct list_element list_extract list_filter list_has list_has_all
    list_has_any list_max list_min list_position list_prepend list_reduce list_reverse
    list_reverse_sort list_select list_slice list_sort list_sum list_avg list_transform
    list_unique list_value list_where list_zip list_first list_last list_string_agg
    list_median list_mode list_product list_stddev_samp list_var_samp list_bool_and
    list_bool_or map map_entries map_extract map_from_entries map_keys map_values
    struct_extract struct_pack struct_insert row unnest
    json json_array json_array_length json_contains json_exists json_extract
    json_extract_path json_extract_path_text json_extract_string json_group_array
    json_group_object json_group_structure json_keys json_merge_patch json_object
    json_quote json_structure json_transform json_transform_strict json_type json_valid
    json_value to_json array_to_json row_to_json
    -> ->>
    """
)

_BY_DIALECT = {
    "sqlite": _SQLITE,
    "postgresql": _POSTGRESQL,
    "duckdb": _DUCKDB,
}

# Functions that may be used as a table in FROM (set-returning / table-valued functions).
_TABLE_FUNCTIONS = {
    "sqlite": _words("json_each json_tree"),
    "postgresql": _words(
        """generate_series generate_subscripts unnest json_array_elements
        json_array_elements_text jsonb_array_elements jsonb_array_elements_text json_each
        json_each_text jsonb_each jsonb_each_text json_object_keys jsonb_object_keys
        jsonb_path_query regexp_matches regexp_split_to_table string_to_table"""
    ),
    "duckdb": _words("generate_series range unnest"),
}


def _dialect_key(dialect: str) -> str:
    name = dialect.lower()
    if name == "postgres":
        return "postgresql"
    return name


def allowed_functions(dialect: str) -> frozenset[str]:
    """The lowercase names of the functions a query may call on ``dialect``.

    ``dialect`` is the adapter's dialect name ('sqlite', 'postgresql', 'duckdb'); any other
    name gets a conservative list of standard functions known everywhere.
    """
    return _BY_DIALECT.get(_dialect_key(dialect), _GENERIC)


def table_functions(dialect: str) -> frozenset[str]:
    """The lowercase names of the allowed functions that may be read as a table in FROM."""
    return _TABLE_FUNCTIONS.get(_dialect_key(dialect), frozenset()) & allowed_functions(dialect)
