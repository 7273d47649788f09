"""MindSpore's MindRecord exception types (`mindspore.mindrecord.common.exceptions`), with its names, base
messages and `str()` form "[ClassName]: message". Each also carries `error_code`, MindSpore's number for it
(runtime, code type, level, system and module ids in the high bits, the exception number in the low 12 bits)."""

__all__ = ["MindRecordException", "ParamValueError", "ParamTypeError", "MRMOpenForAppendError",
           "MRMWriteDatasetError", "MRMCommitError", "MRMAddSchemaError", "MRMGetMetaError", "MRMInvalidSchemaError",
           "MRMDefineIndexError", "PathNotExistsError"]

# exception number and base message, as MindSpore 2.10's EXCEPTIONS table
_TABLE = {
    "MindRecordException": (0, "Unknown Error."),
    "ParamValueError": (2, "Param value is error."),
    "ParamTypeError": (1, "Param type is error."),
    "PathNotExistsError": (4, "Path does not exist."),
    "MRMOpenForAppendError": (101, "MindRecord could not open for append."),
    "MRMWriteDatasetError": (105, "Failed to write dataset."),
    "MRMCommitError": (107, "Failed to commit."),
    "MRMAddSchemaError": (111, "Failed to add schema."),
    "MRMGetMetaError": (114, "Failed to get meta info."),
    "MRMInvalidSchemaError": (200, "Schema is error."),
    "MRMDefineIndexError": (202, "Index field is error."),
}
_RUNTIME, _CODE_TYPE, _LEVEL, _SYS_ID = 1, 1, 0, 0b00101010  # RT_HOST, ERROR_CODE, COMMON_LEVEL, SYS_ID


class MindRecordException(Exception):
    """Base of the MindRecord errors. `error_msg` is the message, `error_code` MindSpore's numeric code.

    Args:
        detail (str, optional): replaces the base message of the class.
    """

    def __init__(self, detail=None):
        number, base = _TABLE.get(type(self).__name__, _TABLE["MindRecordException"])
        self.error_msg = base if detail is None else detail
        self._error_code = (((0xFF & _RUNTIME) << 30) | ((0xFF & _CODE_TYPE) << 28) | ((0xFF & _LEVEL) << 25)
                            | ((0xFF & _SYS_ID) << 17) | ((0xFF & (number // 100 + 1)) << 12) | (0x0FFF & number))
        super().__init__(self.error_msg)

    def __str__(self):
        return f"[{type(self).__name__}]: {self.error_msg}"

    @property
    def error_code(self):
        """int: MindSpore's numeric code of this error."""
        return self._error_code


class ParamValueError(MindRecordException):
    """A parameter with a wrong value (MindSpore also uses it for some wrong types)."""

    def __init__(self, detail):
        super().__init__(f"Invalid parameter value. {detail}")


class ParamTypeError(MindRecordException):
    """A parameter of the wrong type."""

    def __init__(self, param_name, expected_type):
        super().__init__(f"Invalid parameter type. '{param_name}' expect {expected_type} type.")


class MRMOpenForAppendError(MindRecordException):
    """A MindRecord file that cannot be opened for appending."""


class MRMWriteDatasetError(MindRecordException):
    """Writing rows failed (a row larger than a page, the file exists, no schema)."""


class MRMCommitError(MindRecordException):
    """Committing failed (header larger than set_header_size)."""


class MRMAddSchemaError(MindRecordException):
    """add_schema called twice."""


class MRMGetMetaError(MindRecordException):
    """The schema is needed but has not been added."""


class MRMInvalidSchemaError(MindRecordException):
    """A schema that MindRecord cannot store."""

    def __init__(self, detail):
        super().__init__(f"Schema format is error. Detail: {detail}")


class MRMDefineIndexError(MindRecordException):
    """An index field that is not in the schema or is not a scalar field."""

    def __init__(self, detail):
        super().__init__(f"Failed to define index field. Detail: {detail}")


class PathNotExistsError(MindRecordException):
    """A path (or the files it should hold) that does not exist."""

    def __init__(self, error_path):
        super().__init__(f"Invalid path. {error_path}")
