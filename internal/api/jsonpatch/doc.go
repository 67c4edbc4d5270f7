// Package jsonpatch implements Magnum's dialect of JSON Patch (RFC 6902
// restricted to add, replace and remove, plus the attribute rules of
// magnum/api/controllers/v1/types.py and magnum/api/utils.py) and the Python
// literal parser Magnum uses, through ast.literal_eval, for the string form of
// structured values (labels, health_status_reason, node_labels, node_taints).
//
// Errors are *magnum.Error values carrying the reference's status and exact
// message; the API layer renders them unchanged.
package jsonpatch
