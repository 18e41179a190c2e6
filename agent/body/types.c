/* The type table: for each kind of value, its class and its slots, and the
 * type objects a Body can name (str, int, dict, ...) with what calling them
 * does. This is where the value core's behaviour (values/) meets the
 * library's (library/: methods, constructors, str % args), so that the core
 * dispatches through bv__types[] and never names a library function. */
#include "body/library/library.h"

#define CLASS BV__CLASS

CLASS(bv_class_object, "object", NULL, NULL, bv__type_call_object, 0);
CLASS(bv_class_nonetype, "NoneType", NULL, NULL, NULL, 0);
CLASS(bv_class_int, "int", NULL, NULL, bv__type_call_int, 0);
CLASS(bv_class_bool, "bool", NULL, &bv_class_int, bv__type_call_bool, 0);
CLASS(bv_class_float, "float", NULL, NULL, bv__type_call_float, 0);
CLASS(bv_class_str, "str", NULL, NULL, bv__type_call_str, 0);
CLASS(bv_class_list, "list", NULL, NULL, bv__type_call_list, 0);
CLASS(bv_class_tuple, "tuple", NULL, NULL, bv__type_call_tuple, 0);
CLASS(bv_class_dict, "dict", NULL, NULL, bv__type_call_dict, 0);
CLASS(bv_class_bunch, "Bunch", "muranoagent.bunch", &bv_class_dict, NULL, 0);
CLASS(bv_class_set, "set", NULL, NULL, bv__type_call_set, 0);
CLASS(bv_class_range, "range", NULL, NULL, bv__type_call_range, 0);
CLASS(bv_class_slice, "slice", NULL, NULL, NULL, 0);
CLASS(bv_class_dict_keys, "dict_keys", NULL, NULL, NULL, 0);
CLASS(bv_class_dict_values, "dict_values", NULL, NULL, NULL, 0);
CLASS(bv_class_dict_items, "dict_items", NULL, NULL, NULL, 0);
CLASS(bv_class_builtin, "builtin_function_or_method", NULL, NULL, NULL, 0);
CLASS(bv_class_function, "function", NULL, NULL, NULL, 0);
CLASS(bv_class_module, "module", NULL, NULL, NULL, 0);
CLASS(bv_class_script, "ScriptRunner", "muranoagent.script_runner", NULL, NULL, 0);
CLASS(bv_class_function_runner, "FunctionRunner", "muranoagent.script_runner", NULL, NULL, 0);
CLASS(bv_class_file, "TextIOWrapper", "_io", NULL, NULL, 0);
CLASS(bv_class_uuid, "UUID", "uuid", NULL, bv__type_call_uuid, 0);
CLASS(bv_class_type, "type", NULL, NULL, bv__type_call_type, 0);
CLASS(bv_class_map, "map", NULL, NULL, bv__type_call_map, 0);
CLASS(bv_class_filter, "filter", NULL, NULL, bv__type_call_filter, 0);
CLASS(bv_class_zip, "zip", NULL, NULL, bv__type_call_zip, 0);
CLASS(bv_class_enumerate, "enumerate", NULL, NULL, bv__type_call_enumerate, 0);
CLASS(bv_class_reversed, "reversed", NULL, NULL, bv__type_call_reversed, 0);
CLASS(bv_class_list_iterator, "list_iterator", NULL, NULL, NULL, 0);
CLASS(bv_class_tuple_iterator, "tuple_iterator", NULL, NULL, NULL, 0);
CLASS(bv_class_list_reverseiterator, "list_reverseiterator", NULL, NULL, NULL, 0);
CLASS(bv_class_str_iterator, "str_iterator", NULL, NULL, NULL, 0);
CLASS(bv_class_str_ascii_iterator, "str_ascii_iterator", NULL, NULL, NULL, 0);
CLASS(bv_class_dict_keyiterator, "dict_keyiterator", NULL, NULL, NULL, 0);
CLASS(bv_class_dict_valueiterator, "dict_valueiterator", NULL, NULL, NULL, 0);
CLASS(bv_class_dict_itemiterator, "dict_itemiterator", NULL, NULL, NULL, 0);
CLASS(bv_class_set_iterator, "set_iterator", NULL, NULL, NULL, 0);
CLASS(bv_class_range_iterator, "range_iterator", NULL, NULL, NULL, 0);
CLASS(bv_class_longrange_iterator, "longrange_iterator", NULL, NULL, NULL, 0);

#define METHODS(...) ((const BvBuiltinDef *const[]){__VA_ARGS__, NULL})

static const BvType none_type = {.truthy = bv__false,
                                 .hash = bv__none_hash,
                                 .repr = bv__none_repr,
                                 .cls = &bv_class_nonetype};
static const BvType bool_type = {
        .truthy = bv__bool_truthy,
        .hash = bv__int_hash,
        .repr = bv__bool_repr,
        .cls = &bv_class_bool,
        .methods = METHODS(bv__int_methods),
        .getattr = bv__int_getattr,
};
static const BvType int_type = {
        .truthy = bv__int_truthy,
        .hash = bv__int_hash,
        .repr = bv__int_repr,
        .cls = &bv_class_int,
        .methods = METHODS(bv__int_methods),
        .getattr = bv__int_getattr,
};
static const BvType float_type = {
        .truthy = bv__float_truthy,
        .hash = bv__float_hash,
        .repr = bv__float_repr,
        .cls = &bv_class_float,
        .methods = METHODS(bv__float_methods),
        .getattr = bv__float_getattr,
};
static const BvType str_type = {
        .truthy = bv__str_truthy,
        .len = bv__str_len,
        .getitem = bv__str_getitem,
        .iter = bv__str_iter,
        .contains = bv__str_contains,
        .hash = bv__str_hash,
        .eq = bv__str_eq,
        .order = bv__str_order,
        .repr = bv__str_repr,
        .cls = &bv_class_str,
        .methods = METHODS(bv__str_methods, bv__str_case_methods),
        .binop = bv__str_binop,
};
static const BvType list_type = {
        .truthy = bv__seq_truthy,
        .release = bv__seq_release,
        .len = bv__seq_len,
        .getitem = bv__seq_getitem,
        .setitem = bv__list_setitem,
        .delitem = bv__list_delitem,
        .iter = bv__seq_iter,
        .contains = bv__seq_contains,
        .hash = bv__unhashable,
        .eq = bv__seq_eq,
        .order = bv__seq_order,
        .repr = bv__container_repr,
        .cls = &bv_class_list,
        .methods = METHODS(bv__list_methods),
        .binop = bv__seq_binop,
};
static const BvType tuple_type = {
        .truthy = bv__seq_truthy,
        .release = bv__seq_release,
        .len = bv__seq_len,
        .getitem = bv__seq_getitem,
        .iter = bv__seq_iter,
        .contains = bv__seq_contains,
        .hash = bv__tuple_hash,
        .eq = bv__seq_eq,
        .order = bv__seq_order,
        .repr = bv__container_repr,
        .cls = &bv_class_tuple,
        .methods = METHODS(bv__tuple_methods),
        .binop = bv__seq_binop,
};
static const BvType dict_type = {
        .truthy = bv__dict_truthy,
        .release = bv__dict_clear,
        .len = bv__dict_len,
        .getitem = bv__dict_getitem,
        .setitem = bv__dict_setitem,
        .delitem = bv__dict_delitem,
        .iter = bv__dict_iter,
        .contains = bv__dict_contains,
        .hash = bv__unhashable,
        .eq = bv__dict_eq,
        .repr = bv__container_repr,
        .cls = &bv_class_dict,
        .class_of = bv__dict_class,
        .methods = METHODS(bv__dict_methods),
        .getattr = bv__dict_getattr,
        .binop = bv__dict_binop,
};
static const BvType set_type = {
        .truthy = bv__dict_truthy,
        .release = bv__dict_clear,
        .len = bv__dict_len,
        .iter = bv__dict_iter,
        .contains = bv__dict_contains,
        .hash = bv__unhashable,
        .eq = bv__dict_eq,
        .order = bv__set_order,
        .repr = bv__container_repr,
        .cls = &bv_class_set,
        .methods = METHODS(bv__set_methods),
        .binop = bv__set_binop,
};
static const BvType range_type = {
        .truthy = bv__range_truthy,
        .release = bv__range_release,
        .len = bv__range_len,
        .getitem = bv__range_getitem,
        .iter = bv__range_iter,
        .contains = bv__range_contains,
        .hash = bv__range_hash,
        .eq = bv__range_eq,
        .repr = bv__range_repr,
        .cls = &bv_class_range,
        .methods = METHODS(bv__range_methods),
        .getattr = bv__range_getattr,
};
static const BvType slice_type = {.release = bv__slice_release,
                                  .hash = bv__unhashable,
                                  .eq = bv__slice_eq,
                                  .repr = bv__slice_repr,
                                  .cls = &bv_class_slice,
                                  .getattr = bv__slice_getattr};
static const BvType dictview_type = {.truthy = bv__dictview_truthy,
                                     .release = bv__dictview_release,
                                     .len = bv__dictview_len,
                                     .iter = bv__dict_iter,
                                     .contains = bv__dictview_contains,
                                     .repr = bv__container_repr,
                                     .class_of = bv__dictview_class};
static const BvType iter_type = {.release = bv__iter_release,
                                 .iter = bv__self_iter,
                                 .next = bv__iter_next,
                                 .repr = bv__object_repr,
                                 .class_of = bv__iter_class};
static const BvType builtin_type = {.call = bv__builtin_call,
                                    .repr = bv__builtin_repr,
                                    .cls = &bv_class_builtin,
                                    .getattr = bv__builtin_getattr};
static const BvType method_type = {.call = bv__method_call,
                                   .release = bv__method_release,
                                   .hash = bv__method_hash,
                                   .eq = bv__method_eq,
                                   .repr = bv__method_repr,
                                   .cls = &bv_class_builtin,
                                   .getattr = bv__method_getattr};
static const BvType function_type = {.call = bv__function_call,
                                     .release = bv__function_release,
                                     .repr = bv__function_repr,
                                     .cls = &bv_class_function,
                                     .getattr = bv__function_getattr};
static const BvType module_type = {
        .repr = bv__module_repr, .cls = &bv_class_module, .getattr = bv__module_getattr};
static const BvType script_type = {.call = bv__script_call,
                                   .repr = bv__script_repr,
                                   .cls = &bv_class_script,
                                   .class_of = bv__script_class,
                                   .getattr = bv__script_getattr};
static const BvType file_type = {
        .release = bv__file_release,
        .iter = bv__file_iter,
        .next = bv__file_next,
        .repr = bv__file_repr,
        .cls = &bv_class_file,
        .methods = METHODS(bv__file_methods),
        .getattr = bv__file_getattr,
};
static const BvType uuid_type = {.hash = bv__uuid_hash,
                                 .eq = bv__uuid_eq,
                                 .repr = bv__uuid_repr,
                                 .cls = &bv_class_uuid,
                                 .getattr = bv__uuid_getattr};
static const BvType exception_type = {.release = bv__exc_release,
                                      .repr = bv__exc_repr,
                                      .class_of = bv__exc_class_of,
                                      .getattr = bv__exc_getattr};
static const BvType class_type = {.call = bv__class_call,
                                  .repr = bv__class_repr,
                                  .cls = &bv_class_type,
                                  .getattr = bv__class_getattr};

const BvType *const bv__types[BV__KIND_MAX] = {
        [BV_NONE] = &none_type,
        [BV_BOOL] = &bool_type,
        [BV_INT] = &int_type,
        [BV_FLOAT] = &float_type,
        [BV_STR] = &str_type,
        [BV_LIST] = &list_type,
        [BV_TUPLE] = &tuple_type,
        [BV_DICT] = &dict_type,
        [BV_SET] = &set_type,
        [BV_RANGE] = &range_type,
        [BV_SLICE] = &slice_type,
        [BV_DICTVIEW] = &dictview_type,
        [BV_ITER] = &iter_type,
        [BV_BUILTIN] = &builtin_type,
        [BV_METHOD] = &method_type,
        [BV_FUNCTION] = &function_type,
        [BV_MODULE] = &module_type,
        [BV_SCRIPT] = &script_type,
        [BV_FILE] = &file_type,
        [BV_UUID] = &uuid_type,
        [BV_EXCEPTION] = &exception_type,
        [BV_CLASS] = &class_type,
};
