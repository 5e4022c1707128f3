# A pandas DataFrame is also shown as e2b/data, {column: [values]} with
# timestamps in ISO 8601, as E2B's template shows it (a result's `data`).


def _e2b_data_formatter():
    import sys

    from IPython import get_ipython
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class DataFormatter(BaseFormatter):
        format_type = Unicode("e2b/data")
        print_method = ObjectName("_repr_e2b_data_")
        _return_type = (dict, str)

        def __call__(self, obj):
            # Only when pandas is loaded already: 1 + 1 imports nothing.
            pandas = sys.modules.get("pandas")
            if pandas is None or not isinstance(obj, pandas.DataFrame):
                return super().__call__(obj)
            return {column: [v.isoformat() if isinstance(v, pandas.Timestamp) else v for v in values]
                    for column, values in obj.to_dict(orient="list").items()}

    shell = get_ipython()
    shell.display_formatter.formatters["e2b/data"] = DataFormatter(parent=shell.display_formatter)


_e2b_data_formatter()
del _e2b_data_formatter
